package store

import (
	"context"
	"log/slog"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// testEnv is an in-process single-broker kfake cluster.
type testEnv struct {
	t    *testing.T
	ctx  context.Context
	addr string
	cl   *kgo.Client // raw access, as a Java worker or an operator would have
	adm  *kadm.Client
}

func newEnv(t *testing.T) *testEnv {
	t.Helper()
	c, err := kfake.NewCluster(
		kfake.NumBrokers(1),
		kfake.DefaultNumPartitions(1),
		kfake.BrokerConfigs(map[string]string{"log.cleaner.backoff.ms": "1000"}),
	)
	if err != nil {
		t.Fatalf("starting kfake: %v", err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	e := &testEnv{t: t, ctx: ctx, addr: c.ListenAddrs()[0]}
	e.cl = e.client()
	e.adm = kadm.NewClient(e.cl)
	return e
}

func (e *testEnv) client(opts ...kgo.Opt) *kgo.Client {
	e.t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.addr)}, opts...)...)
	if err != nil {
		e.t.Fatalf("NewClient: %v", err)
	}
	e.t.Cleanup(cl.Close)
	return cl
}

func (e *testEnv) options() Options {
	var logger *slog.Logger
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return Options{SeedBrokers: []string{e.addr}, ClientIDPrefix: "test-group", Logger: logger}
}

// createTopic creates a topic the way an operator might, bypassing
// EnsureTopics.
func (e *testEnv) createTopic(name string, partitions int32, configs map[string]string) {
	e.t.Helper()
	cfgs := map[string]*string{}
	for k, v := range configs {
		cfgs[k] = kadm.StringPtr(v)
	}
	if _, err := e.adm.CreateTopic(e.ctx, partitions, -1, cfgs, name); err != nil {
		e.t.Fatalf("creating topic %s: %v", name, err)
	}
}

// produce writes raw records, as a Java worker would.
func (e *testEnv) produce(topic string, kvs ...string) {
	e.t.Helper()
	if len(kvs)%2 != 0 {
		e.t.Fatal("produce wants key, value pairs")
	}
	for i := 0; i < len(kvs); i += 2 {
		r := &kgo.Record{Topic: topic, Key: []byte(kvs[i])}
		if kvs[i+1] != tombstone {
			r.Value = []byte(kvs[i+1])
		}
		if err := e.cl.ProduceSync(e.ctx, r).FirstErr(); err != nil {
			e.t.Fatalf("producing to %s: %v", topic, err)
		}
	}
}

// tombstone stands for a null value in produce and rawRecord.
const tombstone = "<null>"

type rawRecord struct {
	Partition int32
	Key       string
	Value     string
}

// records reads every record in topic, in partition then offset order.
func (e *testEnv) records(topic string) []rawRecord {
	e.t.Helper()
	ends, err := e.adm.ListEndOffsets(e.ctx, topic)
	if err != nil {
		e.t.Fatalf("ListEndOffsets: %v", err)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	cl := e.client(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	defer cl.Close()
	var recs []*kgo.Record
	for len(want) > 0 {
		fs := cl.PollFetches(e.ctx)
		if err := e.ctx.Err(); err != nil {
			e.t.Fatalf("reading %s: %v", topic, err)
		}
		for _, r := range fs.Records() {
			recs = append(recs, r)
			if r.Offset+1 >= want[r.Partition] {
				delete(want, r.Partition)
			}
		}
	}
	sort.SliceStable(recs, func(i, j int) bool {
		if recs[i].Partition != recs[j].Partition {
			return recs[i].Partition < recs[j].Partition
		}
		return recs[i].Offset < recs[j].Offset
	})
	out := make([]rawRecord, len(recs))
	for i, r := range recs {
		v := tombstone
		if r.Value != nil {
			v = string(r.Value)
		}
		out[i] = rawRecord{r.Partition, string(r.Key), v}
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
