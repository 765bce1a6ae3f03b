package doctor

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// workerConfig is a distributed worker's settings against brokers at addr, with no plugins.
func workerConfig(t *testing.T, addr string) *config.Worker {
	t.Helper()
	cfg, err := config.Parse("test.properties", map[string]string{
		"bootstrap.servers": addr, "group.id": "doc-cluster",
		"config.storage.topic": "doc-configs", "offset.storage.topic": "doc-offsets", "status.storage.topic": "doc-status",
		"config.storage.replication.factor": "1", "offset.storage.replication.factor": "1", "status.storage.replication.factor": "1",
		"key.converter": "JsonConverter", "value.converter": "JsonConverter",
		"listeners": fmt.Sprintf("http://127.0.0.1:%d", freePort(t)), "plugin.path": t.TempDir(),
	}, config.Distributed)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func findings(r Report, check string, st Status) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if f.Check == check && f.Status == st {
			out = append(out, f)
		}
	}
	return out
}

func run(t *testing.T, cfg *config.Worker) Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, cfg, Options{Timeout: 2 * time.Second, Version: "test"})
}

// TestTopicsAndGroupChecks runs doctor against an in-process broker whose config topic is not
// compacted and has two partitions, and whose group.id belongs to a consumer group.
func TestTopicsAndGroupChecks(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	cfg := workerConfig(t, addr)
	if r := run(t, cfg); r.Problems() != 0 || len(findings(r, CheckTopics, OK)) != 3 || len(findings(r, CheckClockSkew, OK)) != 1 {
		t.Fatalf("a fresh cluster: %+v", r.Findings)
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumerGroup("doc-cluster"), kgo.ConsumeTopics("doc-status"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx := context.Background()
	if _, err := adm.CreateTopic(ctx, 2, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact,delete")}, "doc-configs"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("compact")}, "doc-status"); err != nil {
		t.Fatal(err)
	}
	// A consumer in the group, so that DescribeGroups reports its protocol type.
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	cl.PollFetches(pctx)
	cancel()

	r := run(t, cfg)
	var msgs []string
	for _, f := range findings(r, CheckTopics, Problem) {
		msgs = append(msgs, f.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, want := range []string{
		"config.storage.topic=doc-configs has cleanup.policy=compact,delete",
		"config.storage.topic=doc-configs has 2 partitions",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no problem %q in:\n%s", want, all)
		}
	}
	if g := findings(r, CheckGroup, Problem); len(g) != 1 || !strings.Contains(g[0].Message, `is a "consumer" group`) || g[0].Fix == "" {
		t.Errorf("group findings %+v", r.Findings)
	}
}

func TestBrokerDownSkipsTheKafkaChecks(t *testing.T) {
	r := run(t, workerConfig(t, fmt.Sprintf("127.0.0.1:%d", freePort(t))))
	if p := findings(r, CheckBroker, Problem); len(p) != 1 || p[0].Fix == "" {
		t.Fatalf("broker findings: %+v", r.Findings)
	}
	for _, c := range []string{CheckTopics, CheckGroup, CheckClockSkew} {
		if len(findings(r, c, Skipped)) != 1 {
			t.Errorf("%s not skipped: %+v", c, r.Findings)
		}
	}
	if w := findings(r, CheckPlugins, Warn); len(w) != 1 {
		t.Errorf("an empty plugin.path is not a warning: %+v", r.Findings)
	}
}

func TestLoopback(t *testing.T) {
	for u, want := range map[string]bool{
		"http://localhost:8083/": true, "http://127.0.0.1:8083": true, "http://127.1.2.3:1": true, "http://[::1]:8083/": true,
		"http://10.0.0.5:8083/": false, "http://worker-1:8083/": false, "http://192.0.2.1:8083": false,
	} {
		if got := loopback(u); got != want {
			t.Errorf("loopback(%q) = %v, want %v", u, got, want)
		}
	}
}
