package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
)

// trackingEnv is a kfake broker with a status store, and a worker whose tasks record their
// topics in it unless props turn tracking off.
type trackingEnv struct {
	statuses *store.StatusStore
	worker   *Worker
	dir      string
}

// newTrackingEnv is a worker whose tasks record their topics in a status store, or, with tracking
// false (topic.tracking.enable=false), a worker given no store to record them in, as node starts it.
func newTrackingEnv(t *testing.T, tracking bool) *trackingEnv {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "lines", "other"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	opts := store.Options{SeedBrokers: c.ListenAddrs()}
	statuses := store.NewStatusStore(opts, store.TopicSpec{Name: "status", Partitions: 1, ReplicationFactor: -1})
	if err := statuses.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(statuses.Close)
	dir, err := os.MkdirTemp(testDataDir, "tracking-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	offsets := store.NewFileOffsetStore(filepath.Join(dir, "offsets.json"))
	wc := Config{
		Worker: &config.Worker{
			KeyConverter: "StringConverter", ValueConverter: "StringConverter",
			OffsetFlushInterval: 100 * time.Millisecond, OffsetFlushTimeout: 5 * time.Second, TaskShutdownTimeout: 10 * time.Second,
		},
		Offsets:    offsets,
		ClientOpts: []kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...)},
	}
	if tracking {
		wc.Statuses = statuses
	}
	w := testWorker(t, wc)
	return &trackingEnv{statuses: statuses, worker: w, dir: dir}
}

// states collects a task's reported states.
type states struct {
	mu  sync.Mutex
	all []string
}

func (s *states) report(st connect.State, trace string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = append(s.all, string(st)+" "+trace)
}

func (s *states) failed() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.all {
		if strings.HasPrefix(st, "FAILED") {
			return st
		}
	}
	return ""
}

func eventually(t *testing.T, what string, st *states, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if f := st.failed(); f != "" {
			t.Fatalf("%s: task %s", what, f)
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; states %q", what, st.all)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func topicNames(s *store.StatusStore, connector string) []string {
	var out []string
	for _, ts := range s.Topics(connector) {
		out = append(out, ts.Topic)
	}
	return out
}

// A source task records the topic it writes to, a sink task each topic it consumes: once, with
// the connector and task, in the status topic.
func TestTopicTrackingFromRealTasks(t *testing.T) {
	e := newTrackingEnv(t, true)
	in, out := filepath.Join(e.dir, "in.txt"), filepath.Join(e.dir, "out.txt")
	var lines strings.Builder
	for i := range 50 {
		fmt.Fprintf(&lines, "line %d\n", i)
	}
	if err := os.WriteFile(in, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}

	srcCfg := map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": in, "topic": "lines"}
	var srcStates states
	e.worker.StartTask(connect.TaskID{Connector: "src", Task: 0}, srcCfg, srcCfg, false, srcStates.report)
	eventually(t, "the source's topic", &srcStates, func() bool { return slices.Equal(topicNames(e.statuses, "src"), []string{"lines"}) })
	ts, _ := e.statuses.Topic("src", "lines")
	if ts.Connector != "src" || ts.Task != 0 || time.Since(ts.Discovered) > time.Minute {
		t.Errorf("topic record %+v", ts)
	}

	snkCfg := map[string]string{"name": "snk", "connector.class": "FileStreamSink", "file": out, "topics.regex": "lines|other"}
	var snkStates states
	e.worker.StartTask(connect.TaskID{Connector: "snk", Task: 2}, snkCfg, snkCfg, false, snkStates.report)
	eventually(t, "the sink's topic", &snkStates, func() bool { return slices.Equal(topicNames(e.statuses, "snk"), []string{"lines"}) })
	if ts, _ := e.statuses.Topic("snk", "lines"); ts.Task != 2 {
		t.Errorf("sink topic record %+v", ts)
	}
	eventually(t, "the sink's output", &snkStates, func() bool {
		b, _ := os.ReadFile(out)
		return strings.Count(string(b), "\n") == 50
	})
	e.worker.topics.wait()
	if got := topicNames(e.statuses, "snk"); !slices.Equal(got, []string{"lines"}) {
		t.Errorf("sink topics %q: a topic it did not consume was recorded", got)
	}

	// Each task writes a topic's record once, however many records it moves.
	e.worker.Stop()
	if err := e.statuses.ResetTopics(context.Background(), "src"); err != nil {
		t.Fatal(err)
	}
	if len(topicNames(e.statuses, "src")) != 0 {
		t.Fatal("reset left topics")
	}
}

// With topic.tracking.enable=false tasks record nothing.
func TestTopicTrackingDisabled(t *testing.T) {
	e := newTrackingEnv(t, false)
	if e.worker.topics != nil {
		t.Fatal("tracking is on")
	}
	in := filepath.Join(e.dir, "in.txt")
	if err := os.WriteFile(in, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(e.dir, "out.txt")
	srcCfg := map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": in, "topic": "lines"}
	snkCfg := map[string]string{"name": "snk", "connector.class": "FileStreamSink", "file": out, "topics": "lines"}
	var st states
	e.worker.StartTask(connect.TaskID{Connector: "src", Task: 0}, srcCfg, srcCfg, false, st.report)
	e.worker.StartTask(connect.TaskID{Connector: "snk", Task: 0}, snkCfg, snkCfg, false, st.report)
	eventually(t, "records through both tasks", &st, func() bool {
		b, _ := os.ReadFile(out)
		return string(b) == "a\nb\n"
	})
	if err := e.statuses.ReadToEnd(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := append(topicNames(e.statuses, "src"), topicNames(e.statuses, "snk")...); len(got) != 0 {
		t.Errorf("topics recorded with tracking off: %q", got)
	}
}

// fakeTopics fails its first writes, to check the writer retries off the data path; until
// release is closed, every write waits, as one to a slow broker would.
type fakeTopics struct {
	release chan struct{}

	mu     sync.Mutex
	fails  int
	puts   []store.TopicStatus
	stored map[string]bool
}

func (f *fakeTopics) Topic(connector, topic string) (store.TopicStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return store.TopicStatus{}, f.stored[connector+"/"+topic]
}

func (f *fakeTopics) PutTopic(_ context.Context, ts store.TopicStatus) error {
	<-f.release
	f.mu.Lock()
	defer f.mu.Unlock()
	f.puts = append(f.puts, ts)
	if f.fails > 0 {
		f.fails--
		return fmt.Errorf("broker down")
	}
	f.stored[ts.Connector+"/"+ts.Topic] = true
	return nil
}

func TestTopicWriterRetriesAndSkipsKnownTopics(t *testing.T) {
	f := &fakeTopics{release: make(chan struct{}), fails: 2, stored: map[string]bool{"c/known": true}}
	w := newTopicWriter(f, testWorker(t, Config{}).log)
	w.backoff = time.Millisecond
	rec := w.recorder(connect.TaskID{Connector: "c", Task: 1})
	// Record returns while the write it queued cannot finish: a task's data path never waits for
	// the status topic.
	recorded := make(chan struct{})
	go func() {
		rec.Record("t")
		rec.Record("known")
		close(recorded)
	}()
	select {
	case <-recorded:
	case <-time.After(10 * time.Second):
		t.Fatal("Record waited for the status topic write")
	}
	close(f.release)
	w.wait()
	if len(f.puts) != 3 || !f.stored["c/t"] || f.puts[2].Task != 1 {
		t.Errorf("puts %+v", f.puts)
	}
}

// wait (for tests) blocks until every record enqueued so far has been written (or given up on).
func (w *topicWriter) wait() {
	w.mu.Lock()
	idle, running := w.idle, w.running
	w.mu.Unlock()
	if running {
		<-idle
	}
}

// last is the state reported last, with its trace.
func (s *states) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.all) == 0 {
		return ""
	}
	return s.all[len(s.all)-1]
}
