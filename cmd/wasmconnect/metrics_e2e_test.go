//go:build e2e

package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample is one series of a /metrics scrape.
type sample struct {
	labels map[string]string
	value  float64
}

// scrape reads a worker's GET /metrics into series by name.
func scrape(t *testing.T, w *worker) map[string][]sample {
	t.Helper()
	out := map[string][]sample{}
	for _, line := range strings.Split(string(w.mustCall(t, 200, "GET", "/metrics", nil)), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		series, raw := line[:sp], line[sp+1:]
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		name, labels := series, map[string]string{}
		if i := strings.IndexByte(series, '{'); i >= 0 {
			name = series[:i]
			for _, kv := range strings.Split(strings.TrimSuffix(series[i+1:], "}"), `",`) {
				k, val, _ := strings.Cut(kv, `="`)
				labels[k] = strings.TrimSuffix(val, `"`)
			}
		}
		out[name] = append(out[name], sample{labels, v})
	}
	return out
}

// find returns the value of the one series of name whose labels include match, and checks that its
// label names are exactly want.
func find(t *testing.T, m map[string][]sample, name string, match map[string]string, want ...string) (float64, bool) {
	t.Helper()
	for _, s := range m[name] {
		ok := true
		for k, v := range match {
			if s.labels[k] != v {
				ok = false
			}
		}
		if !ok {
			continue
		}
		var have []string
		for k := range s.labels {
			have = append(have, k)
		}
		slices.Sort(have)
		want = slices.Clone(want)
		slices.Sort(want)
		if !slices.Equal(have, want) {
			t.Errorf("%s%v: labels %v, want %v", name, match, have, want)
		}
		return s.value, true
	}
	return 0, false
}

// metricCheck is one series the test expects, with its label names and what a plausible value is.
type metricCheck struct {
	name   string
	match  map[string]string
	labels []string
	expect
}

// expect is a plausible value: ok says whether a value is, want says it in words.
type expect struct {
	ok   func(float64) bool
	want string
}

func (c metricCheck) run(t *testing.T, m map[string][]sample) {
	t.Helper()
	v, found := find(t, m, c.name, c.match, c.labels...)
	if !found {
		t.Errorf("no series %s%v", c.name, c.match)
		return
	}
	if !c.ok(v) {
		t.Errorf("%s%v = %v, want %s", c.name, c.match, v, c.want)
	}
}

func eq(want float64) expect {
	return expect{func(v float64) bool { return v == want }, fmt.Sprint(want)}
}
func atLeast(min float64) expect {
	return expect{func(v float64) bool { return v >= min && !math.IsInf(v, 0) }, fmt.Sprintf(">= %v", min)}
}
func above(min float64) expect {
	return expect{func(v float64) bool { return v > min && !math.IsInf(v, 0) }, fmt.Sprintf("> %v", min)}
}
func between(lo, hi float64) expect {
	return expect{func(v float64) bool { return v >= lo && v <= hi }, fmt.Sprintf("in [%v, %v]", lo, hi)}
}

// TestMetricsDuringAPipeline runs a file source, a file sink with a dead letter queue (one line in
// ten is not JSON), and scrapes GET /metrics while records flow and after: every Kafka Connect group
// and every wasmconnect series is there with its labels (worker_id, connector, task) and a plausible
// value; rates are above 0 while records flow, the sink's lag falls to 0 and its active count
// empties once it has caught up and committed.
func TestMetricsDuringAPipeline(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})
	in, out := filepath.Join(files, "in.txt"), filepath.Join(files, "out.txt")
	const n, bad = 30_000, 3_000 // every tenth line is not JSON
	var lines strings.Builder
	for i := 0; i < n; i++ {
		if i%10 == 9 {
			fmt.Fprintf(&lines, "bad-%d\n", i)
		} else {
			fmt.Fprintf(&lines, "{\"n\":%d}\n", i)
		}
	}
	if err := os.WriteFile(in, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "m-source", "config": map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "m-topic",
		"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.storage.StringConverter",
	}})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "m-sink", "config": map[string]string{
		"connector.class": "FileStreamSink", "file": out, "topics": "m-topic",
		"key.converter": "org.apache.kafka.connect.storage.StringConverter", "value.converter": "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
		"errors.tolerance":               "all", "errors.log.enable": "true",
		"errors.deadletterqueue.topic.name": "m-dlq", "errors.deadletterqueue.topic.replication.factor": "1",
	}})

	// While records flow: the rates move.
	src, snk := map[string]string{"connector": "m-source", "task": "0"}, map[string]string{"connector": "m-sink", "task": "0"}
	task := []string{"worker_id", "connector", "task"}
	rates := map[string]bool{}
	maxLag := 0.0
	waitFor(t, 60*time.Second, "all good lines in the sink file", func() bool {
		m := scrape(t, w)
		for _, r := range []struct {
			name  string
			match map[string]string
		}{
			{"kafka_connect_source_task_metrics_source_record_poll_rate", src},
			{"kafka_connect_source_task_metrics_source_record_write_rate", src},
			{"kafka_connect_sink_task_metrics_sink_record_read_rate", snk},
			{"kafka_connect_sink_task_metrics_sink_record_send_rate", snk},
		} {
			if v, _ := find(t, m, r.name, r.match, task...); v > 0 {
				rates[r.name] = true
			}
		}
		if v, _ := find(t, m, "wasmconnect_sink_task_records_lag", snk, task...); v > maxLag {
			maxLag = v
		}
		time.Sleep(50 * time.Millisecond)
		return countLines(out) >= n-bad
	})
	for _, name := range []string{
		"kafka_connect_source_task_metrics_source_record_poll_rate", "kafka_connect_source_task_metrics_source_record_write_rate",
		"kafka_connect_sink_task_metrics_sink_record_read_rate", "kafka_connect_sink_task_metrics_sink_record_send_rate",
	} {
		if !rates[name] {
			t.Errorf("%s never rose above 0 while records flowed", name)
		}
	}
	if maxLag <= 0 {
		t.Error("wasmconnect_sink_task_records_lag never rose above 0, though the whole file was written before the sink started")
	}
	t.Logf("the sink's lag peaked at %v records", maxLag)

	// Once caught up: lag 0, nothing active, everything counted.
	waitFor(t, 10*time.Second, "the sink's lag and active count at 0", func() bool {
		m := scrape(t, w)
		lag, _ := find(t, m, "wasmconnect_sink_task_records_lag", snk, task...)
		active, _ := find(t, m, "kafka_connect_sink_task_metrics_sink_record_active_count", snk, task...)
		inFlight, _ := find(t, m, "kafka_connect_source_task_metrics_source_record_active_count", src, task...)
		return lag == 0 && active == 0 && inFlight == 0
	})
	m := scrape(t, w)
	worker := []string{"worker_id"}
	var checks []metricCheck
	add := func(name string, match map[string]string, labels []string, e expect) {
		checks = append(checks, metricCheck{name, match, labels, e})
	}
	wk := func(attr string, e expect) { add("kafka_connect_connect_worker_metrics_"+attr, nil, worker, e) }
	wk("connector_count", eq(2))
	wk("task_count", eq(2))
	for _, what := range []string{"connector", "task"} {
		wk(what+"_startup_attempts_total", atLeast(2))
		wk(what+"_startup_success_total", atLeast(2))
		wk(what+"_startup_failure_total", eq(0))
		wk(what+"_startup_success_percentage", eq(1))
		wk(what+"_startup_failure_percentage", eq(0))
	}
	rb := func(attr string, e expect) {
		add("kafka_connect_connect_worker_rebalance_metrics_"+attr, nil, worker, e)
	}
	rb("completed_rebalances_total", atLeast(1))
	rb("epoch", atLeast(1))
	rb("rebalancing", eq(0))
	rb("rebalance_avg_time_ms", atLeast(0))
	rb("rebalance_max_time_ms", atLeast(0))
	rb("time_since_last_rebalance_ms", atLeast(0))
	for name, info := range map[string][2]string{"m-source": {"source", "FileStreamSource"}, "m-sink": {"sink", "FileStreamSink"}} {
		c := map[string]string{"connector": name}
		conn := []string{"worker_id", "connector"}
		add("kafka_connect_connector_metrics_status", map[string]string{"connector": name, "status": "running"}, append(conn, "status"), eq(1))
		add("kafka_connect_connector_metrics_connector_type", map[string]string{"connector": name, "connector_type": info[0]}, append(conn, "connector_type"), eq(1))
		add("kafka_connect_connector_metrics_connector_class", c, append(conn, "connector_class"), eq(1))
		add("kafka_connect_connector_metrics_connector_version", c, append(conn, "connector_version"), eq(1))
		add("kafka_connect_connect_worker_metrics_connector_total_task_count", c, conn, eq(1))
		add("kafka_connect_connect_worker_metrics_connector_running_task_count", c, conn, eq(1))
		for _, st := range []string{"paused", "failed", "unassigned", "destroyed", "restarting"} {
			add("kafka_connect_connect_worker_metrics_connector_"+st+"_task_count", c, conn, eq(0))
		}
		for _, s := range m["kafka_connect_connector_metrics_connector_class"] {
			if s.labels["connector"] == name && !strings.Contains(s.labels["connector_class"], info[1]) {
				t.Errorf("%s: connector_class %q, want the %s class", name, s.labels["connector_class"], info[1])
			}
		}
	}
	for _, id := range []map[string]string{src, snk} {
		tk := func(attr string, e expect) { add("kafka_connect_connector_task_metrics_"+attr, id, task, e) }
		add("kafka_connect_connector_task_metrics_status", map[string]string{"connector": id["connector"], "task": "0", "status": "running"}, append(task, "status"), eq(1))
		tk("running_ratio", between(0.5, 1))
		tk("pause_ratio", eq(0))
		tk("batch_size_avg", above(0))
		tk("batch_size_max", above(0))
		tk("offset_commit_avg_time_ms", atLeast(0))
		tk("offset_commit_max_time_ms", atLeast(0))
		tk("offset_commit_success_percentage", eq(1))
		tk("offset_commit_failure_percentage", eq(0))
	}
	sc := func(attr string, e expect) { add("kafka_connect_source_task_metrics_"+attr, src, task, e) }
	sc("source_record_poll_total", eq(n))
	sc("source_record_poll_rate", atLeast(0))
	sc("source_record_write_total", eq(n))
	sc("source_record_write_rate", atLeast(0))
	sc("source_record_active_count", eq(0))
	sc("source_record_active_count_avg", atLeast(0))
	sc("source_record_active_count_max", above(0))
	sc("poll_batch_avg_time_ms", above(0))
	sc("poll_batch_max_time_ms", above(0))
	sk := func(attr string, e expect) { add("kafka_connect_sink_task_metrics_"+attr, snk, task, e) }
	sk("sink_record_read_total", eq(n))
	sk("sink_record_read_rate", atLeast(0))
	sk("sink_record_send_total", eq(n-bad))
	sk("sink_record_send_rate", atLeast(0))
	sk("sink_record_active_count", eq(0))
	sk("sink_record_active_count_avg", atLeast(0))
	sk("sink_record_active_count_max", above(0))
	sk("put_batch_avg_time_ms", above(0))
	sk("put_batch_max_time_ms", above(0))
	sk("offset_commit_completion_total", atLeast(1))
	sk("offset_commit_completion_rate", atLeast(0))
	sk("offset_commit_skip_total", atLeast(0))
	sk("offset_commit_skip_rate", atLeast(0))
	sk("offset_commit_seq_no", atLeast(1))
	sk("partition_count", eq(1))
	add("wasmconnect_sink_task_records_lag", snk, task, eq(0))
	er := func(id map[string]string, attr string, e expect) {
		add("kafka_connect_task_error_metrics_"+attr, id, task, e)
	}
	er(snk, "total_record_errors", eq(bad))
	er(snk, "total_records_skipped", eq(bad))
	er(snk, "total_record_failures", atLeast(bad))
	er(snk, "total_retries", eq(0))
	er(snk, "total_errors_logged", eq(bad))
	er(snk, "deadletterqueue_produce_requests", eq(bad))
	er(snk, "deadletterqueue_produce_failures", eq(0))
	nowMs := float64(time.Now().UnixMilli())
	er(snk, "last_error_timestamp", between(nowMs-5*60_000, nowMs+1000))
	er(src, "total_record_errors", eq(0))
	er(src, "last_error_timestamp", eq(0))
	for _, c := range checks {
		c.run(t, m)
	}
	checks = nil

	// The WebAssembly series: every task's plugins were called, burned fuel, did not trap, and hold
	// memory; every module the tasks use has live instances.
	plugin := append(slices.Clone(task), "plugin")
	for id, ops := range map[string][]string{"m-source": {"open", "poll", "commit", "from_connect"}, "m-sink": {"open", "put", "flush", "to_connect"}} {
		for _, op := range ops {
			total := 0.0
			for _, s := range m["wasmconnect_plugin_call_duration_seconds_count"] {
				if s.labels["connector"] == id && s.labels["op"] == op {
					total += s.value
				}
			}
			if total <= 0 {
				t.Errorf("%s: no %s calls in wasmconnect_plugin_call_duration_seconds_count", id, op)
			}
		}
		var plugins []string
		for _, s := range m["wasmconnect_plugin_fuel_consumed_total"] {
			if s.labels["connector"] == id {
				plugins = append(plugins, s.labels["plugin"])
				add("wasmconnect_plugin_fuel_consumed_total", s.labels, plugin, above(0))
				add("wasmconnect_plugin_traps_total", s.labels, plugin, eq(0))
				bucket := map[string]string{"connector": id, "plugin": s.labels["plugin"], "le": "+Inf"}
				if _, ok := find(t, m, "wasmconnect_plugin_call_duration_seconds_bucket", bucket, append(slices.Clone(plugin), "op", "le")...); !ok {
					t.Errorf("%s plugin %s: no call histogram", id, s.labels["plugin"])
				}
			}
		}
		if len(plugins) < 2 { // the connector's task and its converters
			t.Errorf("%s: plugin series for %v only", id, plugins)
		}
		mem := 0
		for _, s := range m["wasmconnect_plugin_memory_bytes"] {
			if s.labels["connector"] == id {
				mem++
				add("wasmconnect_plugin_memory_bytes", s.labels, append(slices.Clone(task), "module"), above(65535))
			}
		}
		if mem < 2 {
			t.Errorf("%s: memory of %d modules, want the file and converter modules", id, mem)
		}
	}
	live := 0
	for _, s := range m["wasmconnect_plugin_module_instances"] {
		if s.value >= 2 { // a source and a sink task: two instances of each module they use
			live++
			add("wasmconnect_plugin_module_instances", s.labels, []string{"worker_id", "module"}, atLeast(2))
		}
	}
	if live < 2 {
		t.Errorf("wasmconnect_plugin_module_instances: %v", m["wasmconnect_plugin_module_instances"])
	}
	for _, c := range checks {
		c.run(t, m)
	}
}
