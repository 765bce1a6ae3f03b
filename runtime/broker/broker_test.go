package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

func start(t *testing.T, cfg Config) *Broker {
	t.Helper()
	b, err := Start(cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return b
}

func client(t *testing.T, b *Broker, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(b.Addr())}, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// consumeAll reads topic from the start until it has seen want records.
func consumeAll(ctx context.Context, t *testing.T, b *Broker, topic string, want int) []*kgo.Record {
	t.Helper()
	cl := client(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var recs []*kgo.Record
	for len(recs) < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d of %d records from %s: %v", len(recs), want, topic, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("fetch %s/%d: %v", topic, p, err) })
		recs = append(recs, fs.Records()...)
	}
	return recs
}

func TestStartProduceConsumeRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()

	b := start(t, Config{Listen: "127.0.0.1:0", DataDir: dir, ClusterID: "wasmconnect-test"})
	if !strings.HasPrefix(b.Addr(), "127.0.0.1:") || strings.HasSuffix(b.Addr(), ":0") {
		t.Fatalf("Addr = %q, want 127.0.0.1 with a chosen port", b.Addr())
	}
	if b.ClusterID() != "wasmconnect-test" {
		t.Fatalf("ClusterID = %q", b.ClusterID())
	}

	// The topic does not exist: producing auto-creates it with one
	// partition, as a default Kafka broker does.
	cl := client(t, b, kgo.AllowAutoTopicCreation())
	for i := range 10 {
		r := &kgo.Record{Topic: "auto", Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctx, "auto")
	if err != nil {
		t.Fatalf("ListTopics: %v", err)
	}
	if n := len(topics["auto"].Partitions); n != 1 {
		t.Fatalf("auto-created topic has %d partitions, want 1", n)
	}
	if got := consumeAll(ctx, t, b, "auto", 10); string(got[9].Value) != "v9" {
		t.Fatalf("last record = %q, want v9", got[9].Value)
	}
	cl.Close()
	b.Close()

	b = start(t, Config{Listen: "127.0.0.1:0", DataDir: dir, ClusterID: "other"})
	defer b.Close()
	if b.ClusterID() != "wasmconnect-test" {
		t.Fatalf("after restart ClusterID = %q, want the persisted one", b.ClusterID())
	}
	got := consumeAll(ctx, t, b, "auto", 10)
	for i, r := range got {
		if want := fmt.Sprintf("v%d", i); string(r.Value) != want || r.Offset != int64(i) {
			t.Fatalf("record %d after restart = %q at offset %d, want %q at %d", i, r.Value, r.Offset, want, i)
		}
	}
}

// TestCompactsAfterRestart checks the workaround for kfake not starting its
// compaction ticker after reloading a data directory.
func TestCompactsAfterRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	cfg := Config{DataDir: dir, LogCleanerBackoff: time.Second}

	b := start(t, cfg)
	adm := kadm.NewClient(client(t, b))
	if _, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "cmp"); err != nil {
		t.Fatalf("CreateTopic: %v", err)
	}
	b.Close()

	// Restart, then write: the ticker must run although this run never
	// saw a CreateTopics or AlterConfigs request.
	b = start(t, cfg)
	defer b.Close()
	cl := client(t, b)
	const versions = 50
	for i := range versions {
		// One batch per record: kfake never compacts a partition's last batch.
		r := &kgo.Record{Topic: "cmp", Key: []byte("same-key"), Value: fmt.Appendf(nil, "v%d", i)}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	adm = kadm.NewClient(cl)
	for {
		starts, err := adm.ListStartOffsets(ctx, "cmp")
		if err != nil {
			t.Fatalf("ListStartOffsets: %v", err)
		}
		if o, _ := starts.Lookup("cmp", 0); o.Offset > 0 {
			t.Logf("log start offset moved to %d", o.Offset)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("compacted topic was not compacted after a restart from the data dir")
		case <-time.After(200 * time.Millisecond):
		}
	}
	got := consumeAll(ctx, t, b, "cmp", 1)
	if last := got[len(got)-1]; string(last.Value) != fmt.Sprintf("v%d", versions-1) {
		t.Fatalf("latest value = %q", last.Value)
	}
}

func TestListenValidation(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":9092", "127.0.0.1", "127.0.0.1:x"} {
		if _, err := Start(Config{Listen: listen}); err == nil {
			t.Errorf("Start(Listen: %q) succeeded, want an error", listen)
		} else {
			t.Logf("%s: %v", listen, err)
		}
	}
}

// TestAutoCreatedTopicIsOnDiskBeforeUse copies the data dir of a running broker right after a
// producer was acknowledged (what a kill -9 would leave) and starts a second broker on the copy: it
// has the auto-created topic, under the same ID, with the records.
func TestAutoCreatedTopicIsOnDiskBeforeUse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	b := start(t, Config{DataDir: dir})
	defer b.Close()
	cl := client(t, b, kgo.AllowAutoTopicCreation())
	for i := range 5 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "auto", Value: fmt.Appendf(nil, "v%d", i)}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctx, "auto")
	if err != nil {
		t.Fatal(err)
	}

	crashed := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(crashed, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	b2 := start(t, Config{DataDir: crashed, DisableAutoTopicCreation: true})
	defer b2.Close()
	after, err := kadm.NewClient(client(t, b2)).ListTopics(ctx, "auto")
	if err != nil {
		t.Fatal(err)
	}
	if after["auto"].Err != nil || after["auto"].ID != topics["auto"].ID {
		t.Fatalf("topic after the crash: %+v (err %v), before: ID %s", after["auto"].ID, after["auto"].Err, topics["auto"].ID)
	}
	if got := consumeAll(ctx, t, b2, "auto", 5); string(got[4].Value) != "v4" {
		t.Fatalf("records after the crash: last is %q", got[4].Value)
	}
}

func TestDisableAutoTopicCreation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := start(t, Config{DisableAutoTopicCreation: true})
	defer b.Close()
	cl := client(t, b, kgo.AllowAutoTopicCreation(), kgo.RecordDeliveryTimeout(2*time.Second))
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "none", Value: []byte("v")}).FirstErr(); err == nil {
		t.Fatal("produce to a missing topic succeeded with auto-creation off")
	}
	topics, err := kadm.NewClient(cl).ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if topics.Has("none") {
		t.Fatal("topic created with auto-creation off")
	}
}

// TestOrphanedPartitionsOfALostTopicAreSetAside starts a broker on a data dir that a broker killed
// before this fix left behind: the records of an auto-created topic, but not the topic. Producing
// to the topic again creates it afresh; its consumers must read the new records, not the old
// batches underneath.
func TestOrphanedPartitionsOfALostTopicAreSetAside(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	produceValues := func(b *Broker, values ...string) {
		t.Helper()
		cl := client(t, b, kgo.AllowAutoTopicCreation())
		for _, v := range values {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "lost", Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatalf("produce: %v", err)
			}
		}
		cl.Close()
	}
	b := start(t, Config{DataDir: dir})
	produceValues(b, "old-0", "old-1", "old-2", "old-3", "old-4")
	b.Close()

	// What the topic list looked like after a kill -9 before the fix: without the topic.
	path := filepath.Join(dir, "topics.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var topics map[string]any
	if err := json.Unmarshal(raw, &topics); err != nil {
		t.Fatal(err)
	}
	var kept []any
	for _, tp := range topics["topics"].([]any) {
		if tp.(map[string]any)["name"] != "lost" {
			kept = append(kept, tp)
		}
	}
	topics["topics"] = kept
	if raw, err = json.Marshal(topics); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	b = start(t, Config{DataDir: dir})
	defer b.Close()
	produceValues(b, "new-0", "new-1", "new-2")
	cl := client(t, b, kgo.ConsumeTopics("lost"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	var got []string
	for len(got) < 3 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %q: %v", got, err)
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s-%d: %v", topic, p, err) })
		for _, r := range fs.Records() {
			got = append(got, fmt.Sprintf("%s@%d", r.Value, r.Offset))
		}
	}
	if want := "[new-0@0 new-1@1 new-2@2]"; fmt.Sprint(got) != want {
		t.Fatalf("recreated topic reads %v, want %s", got, want)
	}
	moved, err := filepath.Glob(filepath.Join(dir, "orphaned", "lost-0-*", "0.dat"))
	if err != nil || len(moved) != 1 {
		t.Fatalf("old records not kept under orphaned/: %v %v", moved, err)
	}
}

func TestParseSASLUser(t *testing.T) {
	for in, want := range map[string]SASLUser{
		"connect:secret":               {User: "connect", Password: "secret"},
		"connect:secret:scram-sha-512": {User: "connect", Password: "secret", Mechanism: "SCRAM-SHA-512"},
	} {
		if got, err := ParseSASLUser(in); err != nil || got != want {
			t.Errorf("ParseSASLUser(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"connect", "connect:", ":secret", "connect:secret:GSSAPI", "a:b:c:d"} {
		_, err := ParseSASLUser(in)
		if err == nil {
			t.Errorf("ParseSASLUser(%q) accepted", in)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseSASLUser(%q): the error shows the password: %v", in, err)
		}
	}
}

// TestSASLUsersAreTheOnesGivenAtStart restarts a broker on its data directory with a changed
// password: kfake would reload the users of the last run over the new ones (and lock out the
// broker's own start-up client); the users given at start must be the only ones, and no password
// may stay on disk.
func TestSASLUsersAreTheOnesGivenAtStart(t *testing.T) {
	dir := t.TempDir()
	login := func(addr, pass string) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequestRetries(0),
			kgo.SASL(scram.Auth{User: "connect", Pass: pass}.AsSha512Mechanism()))
		if err != nil {
			return err
		}
		defer cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = kadm.NewClient(cl).BrokerMetadata(ctx)
		return err
	}
	for i, pass := range []string{"first-password", "second-password"} {
		b, err := Start(Config{DataDir: dir, SASLUsers: []SASLUser{{Mechanism: "SCRAM-SHA-512", User: "connect", Password: pass}}})
		if err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
		if err := login(b.Addr(), pass); err != nil {
			t.Errorf("start %d: the password given at start is refused: %v", i+1, err)
		}
		if i > 0 {
			if err := login(b.Addr(), "first-password"); err == nil {
				t.Errorf("start %d: the password of the last run still works", i+1)
			}
		}
		b.Close()
		if _, err := os.Stat(filepath.Join(dir, saslFile)); err == nil {
			t.Errorf("start %d: %s left in the data directory after Close", i+1, saslFile)
		}
	}
}
