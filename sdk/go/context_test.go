//go:build unix

package sdk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestOpenFileFollowsLinksOnlyWithinGrants runs natively, where the kernel alone would follow a
// link out: OpenFile must resolve the links itself and refuse those that leave the grants.
func TestOpenFileFollowsLinksOnlyWithinGrants(t *testing.T) {
	parent := t.TempDir()
	a, b, outside := filepath.Join(parent, "a"), filepath.Join(parent, "b"), filepath.Join(parent, "outside")
	for _, d := range []string{filepath.Join(a, "sub"), b, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, content := range map[string]string{
		filepath.Join(a, "sub", "data.txt"): "a data",
		filepath.Join(b, "data.txt"):        "b data",
		filepath.Join(outside, "secret"):    "secret",
	} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"rel":        "sub/data.txt",
		"sub/back":   "../rel",
		"abs":        filepath.Join(a, "sub", "data.txt"),
		"to-b":       "../b/data.txt",
		"abs-out":    filepath.Join(outside, "secret"),
		"climb":      "sub/../../outside/secret",
		"dir-out":    outside,
		"loop":       "loop",
		"new-out":    filepath.Join(outside, "new"),
		"sub/up":     "..",
		"sub/upup":   "../..",
		"sub/nested": "../sub/up/sub/data.txt",
	} {
		if err := os.Symlink(target, filepath.Join(a, link)); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(a, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Were the FIFO opened, the open would block until a peer came: this comes after a while, so
	// that the test fails instead of hanging.
	unblock := time.AfterFunc(3*time.Second, func() {
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			t.Cleanup(func() { f.Close() })
		}
	})
	defer unblock.Stop()
	c := NewTaskContext("c", 0, a, b)
	for link, want := range map[string]string{
		"rel": "a data", "sub/back": "a data", "abs": "a data", "to-b": "b data", "sub/nested": "a data",
	} {
		f, err := c.OpenFile(filepath.Join(a, link), os.O_RDONLY, 0)
		if err != nil {
			t.Errorf("%s: %v", link, err)
			continue
		}
		got := make([]byte, 16)
		n, _ := f.Read(got)
		f.Close()
		if string(got[:n]) != want {
			t.Errorf("%s reads %q, want %q", link, got[:n], want)
		}
	}
	for link, target := range map[string]string{
		"abs-out":         filepath.Join(outside, "secret"),
		"climb":           filepath.Join(outside, "secret"),
		"dir-out/secret":  filepath.Join(outside, "secret"),
		"new-out":         filepath.Join(outside, "new"),
		"sub/upup/secret": filepath.Join(parent, "secret"),
	} {
		path := filepath.Join(a, link)
		_, err := c.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		want := `plugin.fs.allow does not grant access to "` + path + `": it leads to "` + target + `" (granted: ` + a + ", " + b + ")"
		if err == nil || err.Error() != want || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("%s: %v, want %s", link, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Errorf("a file was created outside the grants")
	}
	if _, err := c.OpenFile(filepath.Join(a, "loop"), os.O_RDONLY, 0); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("loop: %v", err)
	}
	f, err := c.OpenFile(fifo, os.O_RDONLY, 0)
	if err == nil {
		f.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO), not a regular file") || !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("fifo: %v", err)
	}
	if _, err := c.OpenFile(filepath.Join(a, "missing"), os.O_RDONLY, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
