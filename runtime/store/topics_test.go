package store

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
)

func TestEnsureTopics(t *testing.T) {
	e := newEnv(t)
	specs := []TopicSpec{
		{Name: "c", SinglePartition: true, ReplicationFactor: -1},
		{Name: "o", Partitions: 25, ReplicationFactor: -1, Configs: map[string]string{"segment.bytes": "1048576", "cleanup.policy": "delete"}},
		{Name: "s", Partitions: 5, ReplicationFactor: -1},
	}
	must(t, EnsureTopics(e.ctx, e.adm, specs...))
	// Idempotent: existing, correct topics pass.
	must(t, EnsureTopics(e.ctx, e.adm, specs...))

	details, err := e.adm.ListTopics(e.ctx, "c", "o", "s")
	must(t, err)
	for name, want := range map[string]int{"c": 1, "o": 25, "s": 5} {
		if got := len(details[name].Partitions); got != want {
			t.Errorf("topic %s has %d partitions, want %d", name, got, want)
		}
	}
	cfgs, err := e.adm.DescribeTopicConfigs(e.ctx, "o")
	must(t, err)
	rc, err := cfgs.On("o", nil)
	must(t, err)
	got := map[string]string{}
	for _, c := range rc.Configs {
		got[c.Key] = c.MaybeValue()
	}
	if got["cleanup.policy"] != "compact" || got["segment.bytes"] != "1048576" {
		t.Errorf("topic o configs: cleanup.policy=%q segment.bytes=%q", got["cleanup.policy"], got["segment.bytes"])
	}
}

func TestEnsureTopicsReportsEveryProblem(t *testing.T) {
	e := newEnv(t)
	e.createTopic("bad-policy", 1, nil) // Kafka's default policy: delete
	e.createTopic("bad-parts", 2, map[string]string{"cleanup.policy": "compact"})
	err := EnsureTopics(e.ctx, e.adm,
		TopicSpec{Name: "bad-policy", Property: "offset.storage.topic"},
		TopicSpec{Name: "bad-parts", SinglePartition: true},
		TopicSpec{Name: "fine", ReplicationFactor: -1},
	)
	for _, want := range []string{
		`internal topic "bad-policy" (offset.storage.topic) has cleanup.policy=delete; Kafka Connect requires cleanup.policy=compact`,
		`internal topic "bad-parts" has 2 partitions; Kafka Connect requires the config topic to have exactly 1 partition`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\ndoes not contain %q", err, want)
		}
	}
	if d, _ := e.adm.ListTopics(e.ctx, "fine"); d["fine"].Err != nil {
		t.Errorf("the valid missing topic was not created: %v", d["fine"].Err)
	}
}

func TestEnsureTopicsReplicationFactorHint(t *testing.T) {
	e := newEnv(t)
	err := EnsureTopics(e.ctx, e.adm, TopicSpec{Name: "x", Partitions: 1, ReplicationFactor: 3, Property: "status.storage.topic"})
	if err == nil || !strings.Contains(err.Error(), "lower status.storage.replication.factor") {
		t.Fatalf("error %v, want a hint to lower status.storage.replication.factor", err)
	}
	var ae *kadm.AuthError
	if errors.As(err, &ae) {
		t.Fatalf("unexpected auth error %v", err)
	}
}

// TestCreateTopicRace checks that losing a creation race to another worker
// is not an error.
func TestCreateTopicRace(t *testing.T) {
	e := newEnv(t)
	e.createTopic("raced", 1, map[string]string{"cleanup.policy": "compact"})
	created, err := createTopic(e.ctx, e.adm, TopicSpec{Name: "raced", Partitions: 1, ReplicationFactor: -1})
	if err != nil || created {
		t.Fatalf("createTopic on an existing topic = %v, %v; want false, nil", created, err)
	}
}

func TestEnsureTopicsWarnsAboutTooFewPartitions(t *testing.T) {
	e := newEnv(t)
	e.createTopic("few-offsets", 2, map[string]string{"cleanup.policy": "compact"})
	var buf strings.Builder
	ctx := withWarnings(e.ctx, slog.New(slog.NewTextHandler(&buf, nil)))
	spec := TopicSpec{Name: "few-offsets", Partitions: 25, ReplicationFactor: -1, Property: "offset.storage.topic"}
	if err := EnsureTopics(ctx, e.adm, spec); err != nil {
		t.Fatalf("fewer partitions must not stop the worker: %v", err)
	}
	if !strings.Contains(buf.String(), "few-offsets") || !strings.Contains(buf.String(), "2 partitions, fewer than the 25 configured") {
		t.Fatalf("warning %q", buf.String())
	}
}
