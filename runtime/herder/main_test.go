package herder

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/logging"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/worker"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// testHost loads the real file and converter plugins, built once per test binary.
var testHost *wasmhost.Host

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "herder tests:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	tmp, err := os.MkdirTemp("", "wasmconnect-herder-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	defer pluginbuild.Cleanup()
	plugins, err := pluginbuild.Dir("plugins/file", "plugins/transforms")
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	testHost, err = wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{plugins}, CacheDir: filepath.Join(tmp, "cache"), Logger: slog.New(slog.DiscardHandler)})
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
	return m.Run(), nil
}

// env is a herder on an in-process kfake broker (topic "in" has two partitions), alone in its
// cluster (it leads itself), with the real stores.
type env struct {
	t        *testing.T
	ctx      context.Context
	h        *Herder
	configs  *store.ConfigStore
	statuses *store.StatusStore
	offsets  *store.OffsetStore
	adm      *kadm.Client
	addrs    []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "in"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, addrs: c.ListenAddrs()}
	opts := store.Options{SeedBrokers: e.addrs}
	e.configs = store.NewConfigStore(opts, store.TopicSpec{Name: "configs", ReplicationFactor: -1})
	e.offsets = store.NewOffsetStore(opts, store.TopicSpec{Name: "offsets", Partitions: 2, ReplicationFactor: -1})
	e.statuses = store.NewStatusStore(opts, store.TopicSpec{Name: "statuses", Partitions: 2, ReplicationFactor: -1})
	for _, s := range []interface {
		Start(context.Context) error
		Close()
	}{e.configs, e.offsets, e.statuses} {
		if err := s.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.addrs...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	e.adm = kadm.NewClient(cl)
	e.h = e.herder()
	return e
}

// worker returns a worker on the env's stores, with exactly.once.source.support eos.
func (e *env) worker(eos config.ExactlyOnce) *worker.Worker {
	return worker.New(worker.Config{
		Worker: &config.Worker{
			GroupID:      "connect-cluster",
			KeyConverter: "StringConverter", ValueConverter: "StringConverter",
			OffsetFlushInterval: time.Second, OffsetFlushTimeout: 5 * time.Second, TaskShutdownTimeout: 5 * time.Second,
			ExactlyOnceSource: eos,
			Topics:            config.InternalTopics{Offsets: config.Topic{Name: "offsets"}},
		},
		Host: testHost, Offsets: e.offsets, ClientOpts: []kgo.Opt{kgo.SeedBrokers(e.addrs...)},
		ConnectorOffsets: func(topic string) *store.OffsetStore {
			return store.NewOffsetStore(store.Options{SeedBrokers: e.addrs}, store.TopicSpec{Name: topic, Partitions: 2, ReplicationFactor: -1})
		},
		Statuses: e.statuses, Logger: slog.New(slog.DiscardHandler),
	})
}

// herder returns a new herder on the env's stores, with a logger of its own levels.
func (e *env) herder() *Herder {
	w := e.worker(config.ExactlyOnceDisabled)
	return New(Config{
		WorkerID: "w1:8083", ClusterID: "test", Worker: w,
		Configs: e.configs, Statuses: e.statuses, Admin: e.adm,
		Logger: logging.Wrap(slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))),
	})
}

// create creates a connector with an initial state, failing the test on error.
func (e *env) create(name string, cfg map[string]string, initial connect.TargetState) {
	e.t.Helper()
	if _, err := e.h.CreateConnector(e.ctx, name, cfg, initial); err != nil {
		e.t.Fatalf("creating %s: %v", name, err)
	}
}

// wantErr checks an error's status code and exact message.
func wantErr(t *testing.T, what string, err error, code int, msg string) {
	t.Helper()
	if err == nil || connect.StatusCode(err) != code || err.Error() != msg {
		t.Errorf("%s: got %d %v\nwant %d %s", what, connect.StatusCode(err), err, code, msg)
	}
}
