package sdk

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
// and absolute. The error names the path and the granted directories.
func (c *TaskContext) CheckPath(path string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		var err error
		if abs, err = filepath.Abs(path); err != nil {
			return "", fmt.Errorf("%q: %w", path, err)
		}
	}
	abs = filepath.Clean(abs)
	for _, d := range c.fsAllow {
		if abs == d || strings.HasPrefix(abs, d+string(filepath.Separator)) || d == string(filepath.Separator) {
			return abs, nil
		}
	}
	granted := "none"
	if len(c.fsAllow) > 0 {
		granted = strings.Join(c.fsAllow, ", ")
	}
	return "", &notAllowedError{path: path, granted: granted}
}

type notAllowedError struct{ path, granted string }

func (e *notAllowedError) Error() string {
	return fmt.Sprintf("plugin.fs.allow does not grant access to %q (granted: %s)", e.path, e.granted)
}

func (e *notAllowedError) Is(target error) bool { return target == fs.ErrPermission }

// OpenFile opens a file like os.OpenFile after checking it against the directories granted by
// plugin.fs.allow. Errors name the path; errors.Is(err, fs.ErrNotExist) and fs.ErrPermission work.
func (c *TaskContext) OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	abs, err := c.CheckPath(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(abs, flag, perm)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == abs {
			return nil, err
		}
		return nil, fmt.Errorf("open %s: %w", abs, err)
	}
	return f, nil
}
