// Package hosttest starts a wasmhost.Host over real plugin modules for a test: the modules are
// compiled once into a cache shared by every test process, the host's log is kept and printed when
// the test fails, and a module that fails to load fails the test instead of leaving a plugin
// silently missing.
package hosttest

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// New starts a host with cfg and closes it when the test ends. An empty cfg.CacheDir is the shared
// test compile cache, and a nil cfg.Logger logs at debug level into the returned Log.
func New(t testing.TB, cfg wasmhost.Config) (*wasmhost.Host, *Log) {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = filepath.Join(os.TempDir(), "wasmconnect-plugins-test-cache")
	}
	logs := &Log{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx := context.Background()
	h, err := wasmhost.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close(ctx)
		if t.Failed() {
			t.Logf("host log:\n%s", logs)
		}
	})
	if errs := h.LoadErrors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	return h, logs
}

// Log is the host's log, safe to write from the tasks' goroutines while a test reads it.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is everything logged so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
