package broker

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A producer whose transaction was open when the broker was killed commits a new one on the same
// partition after the restart: a read_committed reader from the start gets the committed records
// of both sides of the crash. kfake alone aborts the open transaction without a marker, and the
// reader drops the producer's later batches, committed ones too (see openTransactions).
func TestCommitsAfterATransactionAKilledBrokerLeftOpenAreRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	b := start(t, Config{Listen: "127.0.0.1:0", DataDir: dir})
	if _, err := kadm.NewClient(client(t, b)).CreateTopic(ctx, 1, -1, nil, "txns"); err != nil {
		t.Fatal(err)
	}
	transact(ctx, t, b, "committed before", true)
	transact(ctx, t, b, "open at the kill", false)
	// A copy of the data dir taken while the transaction is open is what SIGKILL leaves: kfake
	// fsyncs each batch (SyncWrites), and saves its session state only when it stops cleanly.
	crashed := t.TempDir()
	if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}

	if txns, err := openTransactions(crashed); err != nil || len(txns) != 1 || txns[0].topic != "txns" || txns[0].partition != 0 {
		t.Fatalf("open transactions in the killed broker's data dir: %+v, %v; want the one on txns/0", txns, err)
	}
	// A broker that stops cleanly keeps its open transactions, which their producers may still
	// commit: none to end.
	b.Close()
	if txns, err := openTransactions(dir); err != nil || len(txns) != 0 {
		t.Errorf("open transactions to end after a clean stop: %+v, %v; want none", txns, err)
	}

	b2 := start(t, Config{Listen: "127.0.0.1:0", DataDir: crashed})
	defer b2.Close()
	transact(ctx, t, b2, "committed after", true)
	ends, err := kadm.NewClient(client(t, b2)).ListEndOffsets(ctx, "txns")
	if err != nil {
		t.Fatal(err)
	}
	end, _ := ends.Lookup("txns", 0)
	cl := client(t, b2, kgo.ConsumeTopics("txns"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords())
	var got []string
	for next := int64(0); next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read_committed reader at offset %d of %d, with %q", next, end.Offset, got)
		}
		for _, r := range fs.Records() {
			next = r.Offset + 1
			if !r.Attrs.IsControl() {
				got = append(got, string(r.Value))
			}
		}
	}
	if want := []string{"committed before", "committed after"}; !slices.Equal(got, want) {
		t.Errorf("read_committed reader got %q, want %q", got, want)
	}
}

// transact writes value in a transaction of the transactional id "task-0", and commits it or
// leaves it open.
func transact(ctx context.Context, t *testing.T, b *Broker, value string, commit bool) {
	t.Helper()
	p := client(t, b, kgo.TransactionalID("task-0"), kgo.DefaultProduceTopic("txns"))
	if err := p.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(value)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if commit {
		if err := p.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
}
