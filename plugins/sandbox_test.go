//go:build unix

package plugins_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// TestHostilePluginStaysInItsGrant runs a plugin that tries every way out of plugin.fs.allow it can
// (plugins/testdata/hostile): links the operator left that lead out, links it makes itself, "..",
// absolute paths, hard links, renames across the boundary, a FIFO. Each must be refused, with the
// host's "not permitted" for raw calls and the SDK's plugin.fs.allow message for SDK calls, while
// links that stay inside the grant keep working.
func TestHostilePluginStaysInItsGrant(t *testing.T) {
	parent := t.TempDir()
	grant, outside := filepath.Join(parent, "grant"), filepath.Join(parent, "outside")
	mkdirs(t, filepath.Join(grant, "sub"), outside)
	secret := filepath.Join(outside, "secret.txt")
	writeFiles(t, map[string]string{
		secret:                                  "the secret\n",
		filepath.Join(outside, "victim.txt"):    "untouched\n",
		filepath.Join(grant, "victim.txt"):      "victim\n",
		filepath.Join(grant, "sub", "data.txt"): "inside data\n",
	})
	// up climbs from the grant to "/", whatever the temporary directory's depth.
	up := strings.Repeat("../", strings.Count(strings.Trim(grant, "/"), "/")+1)
	for link, target := range map[string]string{
		"link-out":  secret,
		"write-out": filepath.Join(outside, "victim.txt"),
		"preup":     up,
		"rel":       "sub/data.txt",
		"sub/back":  "../sub/data.txt",
		"abs-in":    filepath.Join(grant, "sub", "data.txt"),
	} {
		if err := os.Symlink(target, filepath.Join(grant, link)); err != nil {
			t.Fatal(err)
		}
	}
	fifo := filepath.Join(grant, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// Were an open of the FIFO to block, this opens its other end after a while, so that the test
	// reports the slow call instead of hanging.
	unblock := time.AfterFunc(3*time.Second, func() {
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			t.Cleanup(func() { f.Close() })
		}
	})
	defer unblock.Stop()

	h := newHost(t, grant)
	ctx := context.Background()
	sess := h.NewSession(wasmhost.Env{Connector: "hostile"})
	defer sess.Close(ctx)
	task, err := sess.Open(ctx, resolve(t, h, "wasmconnect.testing.HostileSource", wire.KindSource), wire.RoleTask,
		map[string]string{"dir": grant, "outside": outside, "up": up})
	if err != nil {
		t.Fatal(err)
	}
	recs, err := task.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range recs {
		got[string(r.Key.Bytes)] = string(r.Value.Bytes)
	}

	// Each outcome starts with "ok: " or "refused: " and then contains the rest of what is wanted.
	const (
		notPermitted = "refused: Operation not permitted"
		sdkRefusal   = "refused: plugin.fs.allow does not grant access to "
	)
	want := map[string]string{
		"read via symlink out":                   notPermitted,
		"write via symlink out":                  notPermitted,
		"read via operator's climbing link":      notPermitted,
		"sdk open via symlink out":               sdkRefusal + `"` + filepath.Join(grant, "link-out") + `": it leads to "` + secret + `"`,
		"create symlink up":                      notPermitted,
		"read via own climbing link":             "refused: ", // the link does not exist
		"create symlink to absolute path":        notPermitted,
		"create symlink to absolute path inside": notPermitted, // the documented simplification
		"create symlink with dotdot out":         notPermitted,
		"open dotdot":                            notPermitted,
		"open absolute":                          notPermitted,
		"hard link out":                          notPermitted,
		"hard link of link out":                  notPermitted, // the new link is a link out: reading it fails
		"rename out":                             notPermitted,
		"rename in":                              notPermitted,
		"open fifo":                              "refused: Not supported",
		"sdk open fifo":                          `refused: "` + fifo + `" is a named pipe (FIFO) or socket, not a regular file: plugins may open only regular files and directories`,
		"read via symlink inside":                "ok: inside data",
		"read via symlink with dotdot inside":    "ok: inside data",
		"read via absolute symlink inside":       notPermitted, // raw calls cannot follow absolute links: the SDK can
		"sdk open via absolute symlink inside":   "ok: inside data",
		"create and use symlink inside":          "ok: inside data",
		"hard link inside":                       "ok: inside data",
		"rename inside":                          "ok: back,data.txt,renamed.txt",
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: not attempted", name)
		case !strings.HasPrefix(g, w[:strings.Index(w, ":")+2]) || !strings.Contains(g, w[strings.Index(w, ":")+2:]):
			t.Errorf("%s:\n got %q\nwant %q...", name, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the plugin made %d attempts, the test knows %d: %v", len(got), len(want), got)
	}

	// Nothing outside changed.
	for p, content := range map[string]string{secret: "the secret\n", filepath.Join(outside, "victim.txt"): "untouched\n"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Errorf("%s now holds %q (%v)", p, b, err)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 2 {
		t.Errorf("the outside directory holds %d entries, want 2", len(entries))
	}
	if _, err := os.Stat(filepath.Join(grant, "stolen.txt")); err == nil {
		t.Errorf("a file from outside was renamed into the grant")
	}
}

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for p, content := range files {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
