//go:build e2e && unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSymlinkOutOfGrantedDirectoriesIsAClearError points a FileStreamSource and a FileStreamSink at
// links in the granted directory that lead out of it: both tasks fail with a trace that names
// plugin.fs.allow, the link and where it leads, nothing is read or written outside, and a link
// that stays inside works.
func TestSymlinkOutOfGrantedDirectoriesIsAClearError(t *testing.T) {
	_, addr := startBroker(t)
	granted, other := t.TempDir(), t.TempDir()
	secret, victim := filepath.Join(other, "secret.txt"), filepath.Join(other, "victim.txt")
	for p, content := range map[string]string{
		secret:                             "do not read\n",
		victim:                             "do not write\n",
		filepath.Join(granted, "data.txt"): "inside-1\ninside-2\n",
	} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readLink, writeLink, inLink := filepath.Join(granted, "secret-link"), filepath.Join(granted, "victim-link"), filepath.Join(granted, "data-link")
	for link, target := range map[string]string{readLink: secret, writeLink: victim, inLink: "data.txt"} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": granted})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "escape-read", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": readLink, "topic": "escape",
	}})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "escape-write", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": writeLink, "topics": "escape",
	}})
	out := filepath.Join(granted, "out.txt")
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "inside-read", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": inLink, "topic": "inside",
	}})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "inside-write", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": "inside",
	}})

	for name, link := range map[string]string{"escape-read": readLink, "escape-write": writeLink} {
		s := w.waitTaskState(t, name, "FAILED", time.Minute)
		target, _ := os.Readlink(link)
		for _, want := range []string{`plugin.fs.allow does not grant access to "` + link + `": it leads to "` + target + `"`, granted} {
			if !strings.Contains(s.Tasks[0].Trace, want) {
				t.Errorf("%s: trace lacks %q:\n%s", name, want, s.Tasks[0].Trace)
			}
		}
	}
	waitFor(t, time.Minute, "the lines read through the link inside", func() bool { return countLines(out) >= 2 })
	for p, content := range map[string]string{secret: "do not read\n", victim: "do not write\n"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != content {
			t.Errorf("%s holds %q (%v)", p, b, err)
		}
	}
}

// TestFIFOAsFileIsAClearError gives FileStreamSource and FileStreamSink a FIFO that nobody else
// opens, which blocks a plain open for good: each task fails at once, its trace saying what the
// file is.
func TestFIFOAsFileIsAClearError(t *testing.T) {
	_, addr := startBroker(t)
	granted := t.TempDir()
	fifo := filepath.Join(granted, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": granted})
	for name, cfg := range map[string]map[string]string{
		"fifo-source": {"connector.class": "FileStreamSource", "file": fifo, "topic": "fifo"},
		"fifo-sink":   {"connector.class": "FileStreamSink", "file": fifo, "topics": "fifo"},
	} {
		start := time.Now()
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
		// Without the fix the task stays UNASSIGNED, its open blocked, for as long as one waits.
		s := w.waitTaskState(t, name, "FAILED", 20*time.Second)
		t.Logf("%s failed %s after its creation", name, time.Since(start).Round(time.Millisecond))
		if want := `"` + fifo + `" is a named pipe (FIFO) or socket, not a regular file`; !strings.Contains(s.Tasks[0].Trace, want) {
			t.Errorf("%s: trace lacks %q:\n%s", name, want, s.Tasks[0].Trace)
		}
	}
}
