package worker

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// The real plugins, built once per test binary, and one host that loads them.
var (
	testHost    *wasmhost.Host
	testDataDir string // plugins may read and write here
)

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker tests:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	tmp, err := os.MkdirTemp("", "wasmconnect-worker-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	defer pluginbuild.Cleanup()
	data := filepath.Join(tmp, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		return 0, err
	}
	plugins, err := pluginbuild.Dir("plugins/file", "plugins/transforms")
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	testHost, err = wasmhost.New(ctx, wasmhost.Config{
		PluginPath: []string{plugins}, FSAllow: []string{data}, CacheDir: filepath.Join(tmp, "cache"),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return 0, err
	}
	defer testHost.Close(ctx)
	if errs := testHost.LoadErrors(); len(errs) > 0 {
		return 0, fmt.Errorf("loading plugins: %v", errs)
	}
	if err := testHost.CompileAll(); err != nil { // here, not inside the first test's deadline
		return 0, err
	}
	testDataDir = data
	return m.Run(), nil
}

// testWorker is a worker of a distributed cluster whose group.id is "connect-cluster".
func testWorker(t *testing.T, c Config) *Worker {
	t.Helper()
	if c.Worker == nil {
		c.Worker = &config.Worker{
			GroupID:             "connect-cluster",
			KeyConverter:        "org.apache.kafka.connect.storage.StringConverter",
			ValueConverter:      "org.apache.kafka.connect.storage.StringConverter",
			OffsetFlushInterval: 100 * time.Millisecond,
			OffsetFlushTimeout:  5 * time.Second,
			TaskShutdownTimeout: 10 * time.Second,
		}
	}
	c.Host = testHost
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	w := New(c)
	t.Cleanup(w.Stop)
	return w
}
