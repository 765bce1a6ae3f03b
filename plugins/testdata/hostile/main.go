// Command hostile is a test plugin that tries every known way out of the plugin.fs.allow
// directories, as an attacker would: with plain os and syscall calls, not through the SDK's checks.
// Its one poll returns a record per attempt, the attempt's name as the key and its outcome as the
// value: "refused: <error>" or "ok: <what it got>". The test that runs it
// (plugins/sandbox_test.go) prepares the grant and says which outcome each attempt must have.
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

func init() {
	sdk.RegisterSource(sdk.Info{
		Name:    "Hostile",
		Class:   "wasmconnect.testing.HostileSource",
		Version: "1.0.0",
		Config: []sdk.ConfigDef{
			{Name: "dir", Importance: sdk.High, Documentation: "The granted directory the test prepared."},
			{Name: "outside", Importance: sdk.High, Documentation: "A directory outside the grant, holding secret.txt."},
			{Name: "up", Importance: sdk.High, Documentation: "A relative symlink target that climbs from dir to the root directory."},
			{Name: "topic", Default: new("hostile"), Importance: sdk.Low, Documentation: "The topic of the records."},
		},
	}, connector{})
}

func main() {}

type connector struct{}

func (connector) Validate(sdk.Config) map[string][]string { return nil }

func (connector) TaskConfigs(cfg sdk.Config, _ int) ([]sdk.Config, error) {
	return []sdk.Config{cfg}, nil
}

func (connector) NewTask() sdk.SourceTask { return &task{} }

type task struct {
	ctx  *sdk.TaskContext
	cfg  sdk.Config
	done bool
}

func (t *task) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.ctx, t.cfg = ctx, cfg
	return nil
}

func (t *task) Commit() error { return nil }
func (t *task) Stop() error   { return nil }

// Poll runs every attempt once.
func (t *task) Poll() ([]sdk.SourceRecord, error) {
	if t.done {
		return nil, nil
	}
	t.done = true
	dir, outside, up := t.cfg["dir"], t.cfg["outside"], t.cfg["up"]
	in := func(name string) string { return filepath.Join(dir, name) }
	// viaUp reaches p (absolute) through the operator's link "preup", which climbs to "/".
	viaUp := func(p string) string { return in("preup") + p }
	secret := filepath.Join(outside, "secret.txt")

	var recs []sdk.SourceRecord
	try := func(name string, f func() (string, error)) {
		out, err := f()
		v := "ok: " + out
		if err != nil {
			v = "refused: " + err.Error()
		}
		recs = append(recs, sdk.SourceRecord{Topic: t.cfg["topic"], Key: sdk.String(name), Value: sdk.String(v),
			SourcePartition: map[string]any{"hostile": name}, SourceOffset: map[string]any{"n": len(recs)}})
	}
	read := func(p string) func() (string, error) {
		return func() (string, error) { b, err := os.ReadFile(p); return string(b), err }
	}
	write := func(p string) func() (string, error) {
		return func() (string, error) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				return "", err
			}
			defer f.Close()
			_, err = f.WriteString("written by the hostile plugin\n")
			return "wrote " + p, err
		}
	}
	// raw opens name relative to a descriptor of the granted directory, bypassing the Go runtime's
	// own path cleaning, so that the host sees ".." and absolute paths as they are.
	raw := func(name string) func() (string, error) {
		return func() (string, error) {
			dfd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY, 0)
			if err != nil {
				return "", fmt.Errorf("opening the granted directory: %w", err)
			}
			defer syscall.Close(dfd)
			fd, err := syscall.Openat(dfd, name, syscall.O_RDONLY, 0)
			if err != nil {
				return "", err
			}
			defer syscall.Close(fd)
			b := make([]byte, 256)
			n, err := syscall.Read(fd, b)
			return string(b[:max(n, 0)]), err
		}
	}

	// Links the operator made (or a file swapped for a link) that lead out.
	try("read via symlink out", read(in("link-out")))
	try("write via symlink out", write(in("write-out")))
	try("read via operator's climbing link", read(viaUp(secret)))
	try("sdk open via symlink out", func() (string, error) {
		f, err := t.ctx.OpenFile(in("link-out"), os.O_RDONLY, 0)
		if err == nil {
			f.Close()
		}
		return "opened", err
	})
	// Links the plugin makes itself.
	try("create symlink up", func() (string, error) { return "created", os.Symlink(up, in("up")) })
	try("read via own climbing link", read(in("up")+secret))
	try("create symlink to absolute path", func() (string, error) { return "created", os.Symlink(secret, in("abs")) })
	try("create symlink to absolute path inside", func() (string, error) {
		return "created", os.Symlink(in("sub/data.txt"), in("abs-inside"))
	})
	try("create symlink with dotdot out", func() (string, error) {
		return "created", os.Symlink("../"+filepath.Base(outside)+"/secret.txt", in("dotdot"))
	})
	// Paths that climb or are absolute, as the host sees them.
	try("open dotdot", raw("../"+filepath.Base(dir)+"/../"+filepath.Base(outside)+"/secret.txt"))
	try("open absolute", raw(secret))
	// Hard links and renames across the boundary.
	try("hard link out", func() (string, error) {
		if err := os.Link(viaUp(secret), in("hard")); err != nil {
			return "", err
		}
		return read(in("hard"))()
	})
	try("hard link of link out", func() (string, error) {
		if err := os.Link(in("link-out"), in("hard-link")); err != nil {
			return "", err
		}
		return read(in("hard-link"))()
	})
	try("rename out", func() (string, error) {
		return "renamed", os.Rename(in("victim.txt"), viaUp(filepath.Join(outside, "moved.txt")))
	})
	try("rename in", func() (string, error) { return "renamed", os.Rename(viaUp(secret), in("stolen.txt")) })
	// A special file must fail at once, not block the call (and the task) forever.
	try("open fifo", func() (string, error) {
		start := time.Now()
		f, err := os.OpenFile(in("fifo"), os.O_RDONLY, 0)
		if err == nil {
			f.Close()
		}
		return "opened", errors.Join(err, slow(start))
	})
	try("sdk open fifo", func() (string, error) {
		start := time.Now()
		f, err := t.ctx.OpenFile(in("fifo"), os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			f.Close()
		}
		return "opened", errors.Join(err, slow(start))
	})
	// What must keep working: links that stay inside the grant.
	try("read via symlink inside", read(in("rel")))
	try("read via symlink with dotdot inside", read(in("sub/back")))
	try("read via absolute symlink inside", read(in("abs-in")))
	try("sdk open via absolute symlink inside", func() (string, error) {
		f, err := t.ctx.OpenFile(in("abs-in"), os.O_RDONLY, 0)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b := make([]byte, 64)
		n, err := f.Read(b)
		return string(b[:n]), err
	})
	try("create and use symlink inside", func() (string, error) {
		if err := os.Symlink("sub/data.txt", in("mine")); err != nil {
			return "", err
		}
		return read(in("mine"))()
	})
	try("hard link inside", func() (string, error) {
		if err := os.Link(in("sub/data.txt"), in("hard-inside")); err != nil {
			return "", err
		}
		return read(in("hard-inside"))()
	})
	try("rename inside", func() (string, error) {
		if err := os.Rename(in("victim.txt"), in("sub/renamed.txt")); err != nil {
			return "", err
		}
		entries, err := os.ReadDir(in("sub"))
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return strings.Join(names, ","), err
	})
	return recs, nil
}

// slow is an error if a call that must fail at once took long.
func slow(start time.Time) error {
	if d := time.Since(start); d > time.Second {
		return fmt.Errorf("the call took %s", d)
	}
	return nil
}
