package task

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// metricValue reads one series of a registry: name{labels} (labels as rendered, without braces).
func metricValue(t *testing.T, r *metrics.Registry, name, labels string) float64 {
	t.Helper()
	var b bytes.Buffer
	r.WritePrometheus(&b)
	prefix := name + "{" + labels + "} "
	for _, line := range strings.Split(b.String(), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no series %s{%s} in:\n%s", name, labels, b.String())
	return 0
}

func waitMetric(t *testing.T, r *metrics.Registry, name, labels string, ok func(float64) bool, want string) {
	t.Helper()
	var v float64
	eventually(t, 10*time.Second, func() bool { v = metricValue(t, r, name, labels); return ok(v) },
		func() string { return fmt.Sprintf("%s{%s} = %v, want %s", name, labels, v, want) })
}

// TestSinkMetricsFollowTheLoop runs a sink task whose PUT is held while records queue up behind it:
// the task's lag is above zero while it is behind and falls to 0 once it has consumed everything,
// the active count falls to 0 once the offsets are committed, and each record the dead letter queue
// took is counted in task-error-metrics.
func TestSinkMetricsFollowTheLoop(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "t", "dlq"))
	vals := make([]string, 20)
	for i := range vals {
		vals[i] = "v" + strconv.Itoa(i)
	}
	produceTo(t, c, "t", 0, vals...)
	reg := metrics.New(metrics.Unregistered())
	defer reg.Close()
	m := reg.Task(connect.TaskID{Connector: "snk", Task: 0}, connect.TypeSink)
	hold := make(chan struct{})
	plugin := &fakeSink{put: func(n int, _ []wire.Record) error {
		if n == 1 {
			<-hold
		}
		return nil
	}}
	startSinkTask(t, c, plugin, func(cfg *SinkConfig) {
		cfg.Metrics = m
		cfg.MaxPollRecords = 2
		cfg.ValueConverter = &textConverter{reject: set("v3", "v7")}
		cfg.Errors = ErrorPolicy{TolerateAll: true, Log: true, DLQ: &DeadLetterQueue{Topic: "dlq", Producer: loopClient(t, c), Connector: "snk"}}
	})
	l := `connector="snk",task="0"`
	waitMetric(t, reg, metrics.NameSinkRecordsLag, l, func(v float64) bool { return v > 0 }, "> 0 while PUT is held")
	waitMetric(t, reg, metrics.Kafka("sink-task-metrics", "partition-count"), l, func(v float64) bool { return v == 1 }, "1")
	close(hold)
	waitCommitted(t, c, 0, 20)
	waitMetric(t, reg, metrics.NameSinkRecordsLag, l, func(v float64) bool { return v == 0 }, "0 once caught up")
	waitMetric(t, reg, metrics.Kafka("sink-task-metrics", "sink-record-active-count"), l, func(v float64) bool { return v == 0 }, "0 once committed")
	for name, want := range map[string]float64{
		metrics.Kafka("sink-task-metrics", "sink-record-read-total"):            20,
		metrics.Kafka("sink-task-metrics", "sink-record-send-total"):            18,
		metrics.Kafka("task-error-metrics", "total-record-errors"):              2,
		metrics.Kafka("task-error-metrics", "total-records-skipped"):            2,
		metrics.Kafka("task-error-metrics", "total-errors-logged"):              2,
		metrics.Kafka("task-error-metrics", "deadletterqueue-produce-requests"): 2,
		metrics.Kafka("task-error-metrics", "deadletterqueue-produce-failures"): 0,
		metrics.Kafka("connector-task-metrics", "batch-size-max"):               2,
	} {
		if got := metricValue(t, reg, name, l); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, name := range []string{
		metrics.Kafka("sink-task-metrics", "offset-commit-completion-total"),
		metrics.Kafka("sink-task-metrics", "put-batch-max-time-ms"),
		metrics.Kafka("sink-task-metrics", "sink-record-read-rate"),
		metrics.Kafka("task-error-metrics", "last-error-timestamp"),
		metrics.Kafka("connector-task-metrics", "offset-commit-success-percentage"),
	} {
		if got := metricValue(t, reg, name, l); got <= 0 {
			t.Errorf("%s = %v, want > 0", name, got)
		}
	}
}

// TestSourceMetricsFollowTheLoop: what a source task polled, wrote and committed.
func TestSourceMetricsFollowTheLoop(t *testing.T) {
	c := newLoopCluster(t, kfake.SeedTopics(1, "out"))
	reg := metrics.New(metrics.Unregistered())
	defer reg.Close()
	m := reg.Task(connect.TaskID{Connector: "src", Task: 0}, connect.TypeSource)
	plugin := &fakeSource{script: []pollResult{
		{recs: []wire.Record{sourceRec("out", "f", 1, "a"), sourceRec("out", "f", 2, "b"), sourceRec("out", "f", 3, "c")}},
		{recs: []wire.Record{sourceRec("out", "f", 4, "d")}},
	}}
	r := startSource(t, c, plugin, func(cfg *SourceConfig) { cfg.Metrics = m })
	l := `connector="src",task="0"`
	waitMetric(t, reg, metrics.Kafka("source-task-metrics", "source-record-write-total"), l, func(v float64) bool { return v == 4 }, "4")
	eventually(t, 10*time.Second, func() bool { return r.offsets.of("f") != "" }, func() string { return "no offsets committed" })
	waitMetric(t, reg, metrics.Kafka("connector-task-metrics", "offset-commit-success-percentage"), l, func(v float64) bool { return v == 1 }, "1")
	for name, want := range map[string]float64{
		metrics.Kafka("source-task-metrics", "source-record-poll-total"):   4,
		metrics.Kafka("source-task-metrics", "source-record-active-count"): 0,
		metrics.Kafka("connector-task-metrics", "batch-size-max"):          3,
		metrics.Kafka("connector-task-metrics", "batch-size-avg"):          2,
	} {
		if got := metricValue(t, reg, name, l); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := metricValue(t, reg, metrics.Kafka("source-task-metrics", "source-record-poll-rate"), l); got <= 0 {
		t.Errorf("poll rate %v, want > 0", got)
	}
}
