package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// LogLevel is the level of a log line (sdk/ABI.md §1, import log).
type LogLevel int32

// Log levels.
const (
	LevelTrace LogLevel = 0
	LevelDebug LogLevel = 1
	LevelInfo  LogLevel = 2
	LevelWarn  LogLevel = 3
	LevelError LogLevel = 4
)

func (l LogLevel) String() string {
	switch l {
	case LevelTrace:
		return "TRACE"
	case LevelDebug:
		return "DEBUG"
	case LevelInfo:
		return "INFO"
	case LevelWarn:
		return "WARN"
	case LevelError:
		return "ERROR"
	}
	return fmt.Sprintf("LEVEL%d", int32(l))
}

// host is what the SDK needs from the worker: the wasmconnect imports on wasip1, stand-ins natively.
type host interface {
	log(level LogLevel, msg string)
	// offsetGet returns the stored offset JSON for a source partition JSON, or ok=false.
	offsetGet(partition []byte) (offset []byte, ok bool, err error)
}

// Logf writes a line to the worker log. The host tags it with the connector and task.
func Logf(level LogLevel, format string, args ...any) {
	defaultHost.log(level, fmt.Sprintf(format, args...))
}

// TaskContext tells a task where it runs and gives it access to the worker: stored offsets, the log,
// and the files the operator granted (plugin.fs.allow).
type TaskContext struct {
	connector string
	task      int
	fsAllow   []string
	host      host
}

// NewTaskContext returns a TaskContext for a task of the named connector that may use the files under
// fsAllow. The SDK creates them for the tasks it opens; this is for tests of a task's logic.
func NewTaskContext(connector string, task int, fsAllow ...string) *TaskContext {
	return &TaskContext{connector: connector, task: task, fsAllow: cleanDirs(fsAllow), host: defaultHost}
}

func cleanDirs(dirs []string) []string {
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if d != "" {
			out = append(out, filepath.Clean(d))
		}
	}
	return out
}

// Connector returns the connector's name.
func (c *TaskContext) Connector() string { return c.connector }

// Task returns the task's number.
func (c *TaskContext) Task() int { return c.task }

// FSAllow returns the directories the task may use.
func (c *TaskContext) FSAllow() []string { return append([]string(nil), c.fsAllow...) }

// Logf writes a line to the worker log, tagged with the connector and task.
func (c *TaskContext) Logf(level LogLevel, format string, args ...any) {
	c.host.log(level, fmt.Sprintf(format, args...))
}

// Offset returns the stored source offset for a source partition, and whether one is stored. Numbers
// come back as int64 when they are integers and as float64 otherwise.
func (c *TaskContext) Offset(partition map[string]any) (map[string]any, bool, error) {
	p, err := json.Marshal(partition)
	if err != nil {
		return nil, false, fmt.Errorf("source partition %v: %w", partition, err)
	}
	b, ok, err := c.host.offsetGet(p)
	if err != nil || !ok {
		return nil, false, err
	}
	m, err := decodeJSONObject(b)
	if err != nil {
		return nil, false, fmt.Errorf("stored offset for source partition %s is not a JSON object: %w", p, err)
	}
	return m, true, nil
}

// CheckPath checks that path lies in a directory granted by plugin.fs.allow and returns it cleaned
// and absolute. The error names the path and the granted directories. It looks at the path's text
// only; OpenFile also follows the path's symbolic links.
func (c *TaskContext) CheckPath(path string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = filepath.Abs(path); err != nil {
			return "", fmt.Errorf("%q: %w", path, err)
		}
	}
	abs = filepath.Clean(abs)
	if c.grantOf(abs) == "" {
		return "", c.notAllowed(path, "")
	}
	return abs, nil
}

// grantOf returns the longest granted directory that holds abs (clean and absolute), or "".
func (c *TaskContext) grantOf(abs string) string {
	var grant string
	for _, d := range c.fsAllow {
		if (abs == d || strings.HasPrefix(abs, d+string(filepath.Separator)) || d == string(filepath.Separator)) && len(d) > len(grant) {
			grant = d
		}
	}
	return grant
}

func (c *TaskContext) notAllowed(path, target string) error {
	granted := "none"
	if len(c.fsAllow) > 0 {
		granted = strings.Join(c.fsAllow, ", ")
	}
	return &notAllowedError{path: path, target: target, granted: granted}
}

type notAllowedError struct{ path, target, granted string }

func (e *notAllowedError) Error() string {
	if e.target != "" {
		return fmt.Sprintf("plugin.fs.allow does not grant access to %q: it leads to %q (granted: %s)", e.path, e.target, e.granted)
	}
	return fmt.Sprintf("plugin.fs.allow does not grant access to %q (granted: %s)", e.path, e.granted)
}

func (e *notAllowedError) Is(target error) bool { return target == fs.ErrPermission }

// specialFileError refuses a FIFO, device or socket: opening one may block the task for good, and
// no connector means to stream from one.
type specialFileError struct{ path, kind string }

func (e *specialFileError) Error() string {
	return fmt.Sprintf("%q is a %s, not a regular file: plugins may open only regular files and directories", e.path, e.kind)
}

// specialKind names what fi is if it is neither a regular file nor a directory, else "".
func specialKind(fi fs.FileInfo) string {
	m := fi.Mode()
	switch {
	case untyped(fi):
		return "named pipe (FIFO) or socket"
	case m.IsRegular() || m.IsDir():
		return ""
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

func (e *specialFileError) Is(target error) bool { return target == fs.ErrInvalid }

// maxLinks is how many symbolic links one path may go through, as Linux's limit.
const maxLinks = 40

// resolve follows the symbolic links in abs (clean, absolute, in a grant) one component at a time,
// as the kernel does, and returns the path they lead to with what is there (nil if nothing is, or
// if it is a granted directory or outside every grant, where the guest cannot look). The host
// confines every operation to the grants whatever the guest does (wasmhost/internal/rootfs); this
// is so that a link out is refused with a message naming where it leads, and that links between
// the granted directories, absolute ones included, work.
func (c *TaskContext) resolve(abs string) (string, fs.FileInfo, error) {
	const sep = string(filepath.Separator)
	cur := c.grantOf(abs)
	rest := strings.TrimPrefix(abs[len(cur):], sep)
	var fi fs.FileInfo
	for links := 0; rest != ""; {
		var elem string
		elem, rest, _ = strings.Cut(rest, sep)
		switch elem {
		case "", ".":
			continue
		case "..":
			cur, fi = filepath.Dir(cur), nil
			continue
		}
		next := filepath.Join(cur, elem)
		if g := c.grantOf(next); g == "" || g == next {
			cur, fi = next, nil
			continue
		}
		st, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(next, rest), nil, nil
		}
		if err != nil {
			return "", nil, err
		}
		if st.Mode()&fs.ModeSymlink == 0 {
			cur, fi = next, st
			continue
		}
		if links++; links > maxLinks {
			return "", nil, &fs.PathError{Op: "open", Path: abs, Err: syscall.ELOOP}
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", nil, err
		}
		if filepath.IsAbs(target) {
			cur = sep
		}
		rest = filepath.Join(target, rest)
	}
	return cur, fi, nil
}

// OpenFile opens a file like os.OpenFile after checking it against the directories granted by
// plugin.fs.allow, before and after following its symbolic links, and refuses FIFOs, devices and
// sockets. Errors name the path; errors.Is(err, fs.ErrNotExist) and fs.ErrPermission work.
func (c *TaskContext) OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	abs, err := c.CheckPath(path)
	if err != nil {
		return nil, err
	}
	real, fi, err := c.resolve(abs)
	if err != nil {
		return nil, err
	}
	if c.grantOf(real) == "" {
		return nil, c.notAllowed(path, real)
	}
	if fi != nil {
		if kind := specialKind(fi); kind != "" {
			return nil, &specialFileError{path: path, kind: kind}
		}
	}
	f, err := os.OpenFile(real, flag, perm)
	if err != nil {
		switch {
		case errors.Is(err, syscall.EPERM):
			// The host refused a path that leaves the grants: the file changed since resolve.
			return nil, c.notAllowed(path, "")
		case errors.Is(err, syscall.ENOTSUP):
			// The host refused a special file (wasmhost/internal/rootfs) resolve did not see.
			return nil, &specialFileError{path: path, kind: "special file"}
		}
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == real {
			return nil, err
		}
		return nil, fmt.Errorf("open %s: %w", real, err)
	}
	return f, nil
}
