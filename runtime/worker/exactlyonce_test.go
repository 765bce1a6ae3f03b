package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
)

// Kafka's exactly-once preflight checks on create and /validate: a plugin cannot declare exactly-once
// support nor define transaction boundaries, so "required" and "connector" are refused with Kafka's
// messages; a worker without exactly-once support refuses "required" with its own.
func TestValidateExactlyOnceRules(t *testing.T) {
	src := map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": "/f", "topic": "a"}
	for _, tc := range []struct {
		eos  config.ExactlyOnce
		cfg  map[string]string
		key  string
		want []string
	}{
		{config.ExactlyOnceDisabled, map[string]string{"exactly.once.support": "required"}, "exactly.once.support", []string{errWorkerNotExactlyOnce}},
		{config.ExactlyOnceEnabled, map[string]string{"exactly.once.support": "REQUIRED"}, "exactly.once.support", []string{errNoPreflight}},
		{config.ExactlyOnceEnabled, map[string]string{"exactly.once.support": "requested"}, "exactly.once.support", nil},
		{config.ExactlyOnceEnabled, map[string]string{"transaction.boundary": "connector"}, "transaction.boundary", []string{errNoConnectorBoundaries}},
		{config.ExactlyOnceDisabled, map[string]string{"transaction.boundary": "connector"}, "transaction.boundary", nil},
		{config.ExactlyOnceEnabled, map[string]string{"transaction.boundary": "interval"}, "transaction.boundary", nil},
	} {
		w := testWorker(t, Config{Worker: &config.Worker{
			GroupID: "connect-cluster", KeyConverter: "StringConverter", ValueConverter: "StringConverter",
			OffsetFlushInterval: time.Second, OffsetFlushTimeout: time.Second, ExactlyOnceSource: tc.eos,
		}})
		infos, _, err := w.ValidateConfig(context.Background(), merged(src, tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		if got := byName(t, infos)[tc.key].Value.Errors; !slices.Equal(got, tc.want) {
			t.Errorf("%s with %v: %s errors\n got %q\nwant %q", tc.eos, tc.cfg, tc.key, got, tc.want)
		}
	}
}

func TestTransactionsOf(t *testing.T) {
	w := testWorker(t, Config{})
	for cfg, want := range map[string]string{
		"poll": "", "interval": "", "connector": "transaction.boundary=connector: " + errNoConnectorBoundaries,
		"sometimes": `transaction.boundary: "sometimes" is not one of poll, interval, connector`,
	} {
		tx, err := w.transactionsOf(map[string]string{"transaction.boundary": cfg, "transaction.boundary.interval.ms": "250"}, (*store.OffsetStore)(nil))
		switch {
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("%s: error %v, want %s", cfg, err, want)
		case want == "" && err != nil:
			t.Errorf("%s: %v", cfg, err)
		case cfg == "interval" && (tx.Boundary != "interval" || tx.Interval != 250*time.Millisecond):
			t.Errorf("interval: %+v", tx)
		}
	}
}

// TestExactlyOnceSourceStartsAgainWhenTheBrokerAbortsItsTransaction: a broker may end a task's open
// transaction under it: the embedded broker killed with SIGKILL aborts, when it starts again, what
// was open (the task's commit then fails with INVALID_TXN_STATE), and a transaction coordinator
// that timed one out bumps the producer's epoch (PRODUCER_FENCED). Nothing of that transaction was
// committed, offsets included, so the task starts again from its committed offsets instead of
// staying FAILED, and a read_committed reader sees every line exactly once.
func TestExactlyOnceSourceStartsAgainWhenTheBrokerAbortsItsTransaction(t *testing.T) {
	for _, refusal := range []*kerr.Error{kerr.InvalidTxnState, kerr.ProducerFenced} {
		t.Run(refusal.Message, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "lines"))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			addrs := c.ListenAddrs()
			offsets := store.NewOffsetStore(store.Options{SeedBrokers: addrs, ReadCommitted: true},
				store.TopicSpec{Name: "offsets", Partitions: 1, ReplicationFactor: -1})
			if err := offsets.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer offsets.Close()
			w := testWorker(t, Config{
				Worker: &config.Worker{
					GroupID: "connect-cluster", KeyConverter: "StringConverter", ValueConverter: "StringConverter",
					OffsetFlushInterval: time.Second, OffsetFlushTimeout: 5 * time.Second, TaskShutdownTimeout: 5 * time.Second,
					ExactlyOnceSource: config.ExactlyOnceEnabled,
				},
				Offsets: offsets, ClientOpts: []kgo.Opt{kgo.SeedBrokers(addrs...)},
			})
			dir, err := os.MkdirTemp(testDataDir, "eos-abort-")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			in := filepath.Join(dir, "in.txt")
			writeNumbered(t, in, 0, 100)
			cfg := map[string]string{"connector.class": "FileStreamSource", "file": in, "topic": "lines"}
			var st states
			w.StartTask(connect.TaskID{Connector: "src", Task: 0}, cfg, cfg, false, st.report)
			committedLines(ctx, t, addrs, 100, &st)

			// The next commit is refused, once: the broker ended the transaction.
			var refused atomic.Bool
			c.ControlKey(int16(kmsg.EndTxn), func(req kmsg.Request) (kmsg.Response, error, bool) {
				c.KeepControl()
				if end := req.(*kmsg.EndTxnRequest); !end.Commit || !refused.CompareAndSwap(false, true) {
					return nil, nil, false
				}
				resp := req.(*kmsg.EndTxnRequest).ResponseKind().(*kmsg.EndTxnResponse)
				resp.ErrorCode = refusal.Code
				return resp, nil, true
			})
			writeNumbered(t, in, 100, 200)
			seen := committedLines(ctx, t, addrs, 200, &st)
			for v, n := range seen {
				if n != 1 {
					t.Errorf("read_committed saw %s %d times", v, n)
				}
			}
			if !refused.Load() {
				t.Fatal("no commit was refused: the test did not test")
			}
			if last := st.last(); !strings.HasPrefix(last, "RUNNING") {
				t.Fatalf("the task is %s at the end; states %q", last, st.all)
			}
		})
	}
}

// committedLines waits until a read_committed reader of topic "lines" sees n distinct lines and
// returns how often it saw each.
func committedLines(ctx context.Context, t *testing.T, addrs []string, n int, st *states) map[string]int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumeTopics("lines"), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		for pctx.Err() == nil {
			cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
		}
		cancel()
		cl.Close()
		if len(seen) >= n {
			return seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d lines committed after 30 s; task states %q", len(seen), n, st.all)
		}
	}
}

// writeNumbered appends lines "line-<n>" for n in [from, to).
func writeNumbered(t *testing.T, path string, from, to int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for i := from; i < to; i++ {
		fmt.Fprintf(f, "line-%d\n", i)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
