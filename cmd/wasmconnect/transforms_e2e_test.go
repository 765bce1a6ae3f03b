//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSinkErrorHandlingWithDeadLetterQueue feeds a sink a topic holding one poison record (not
// JSON) among good ones: with errors.tolerance=all every good record reaches the file, through a
// transform chain, and the poison record lands in the dead letter queue with Kafka's error
// headers; with errors.tolerance=none the task fails naming the stage and the record.
func TestSinkErrorHandlingWithDeadLetterQueue(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat is needed (apt-get install kcat): %v", err)
	}
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})

	var in strings.Builder
	for i := 0; i < 100; i++ {
		if i == 42 {
			in.WriteString("this is not json\n")
			continue
		}
		fmt.Fprintf(&in, "{\"n\":%d,\"secret\":\"s%d\"}\n", i, i)
	}
	cmd := exec.Command(kcat, "-P", "-b", addr, "-t", "orders")
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}

	out := filepath.Join(files, "orders.txt")
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "tolerant", "config": map[string]string{
		"connector.class": "FileStreamSink", "topics": "orders", "file": out,
		"key.converter":                                   "org.apache.kafka.connect.storage.StringConverter",
		"value.converter":                                 "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":                  "false",
		"transforms":                                      "mask,tag",
		"transforms.mask.type":                            "org.apache.kafka.connect.transforms.MaskField$Value",
		"transforms.mask.fields":                          "secret",
		"transforms.tag.type":                             "InsertField$Value",
		"transforms.tag.static.field":                     "via",
		"transforms.tag.static.value":                     "wasmconnect",
		"errors.tolerance":                                "all",
		"errors.log.enable":                               "true",
		"errors.deadletterqueue.topic.name":               "orders-dlq",
		"errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable":   "true",
	}})
	waitFor(t, time.Minute, "99 good records in the sink file", func() bool { return countLines(out) >= 99 })
	lines := readLines(t, out)
	if len(lines) != 99 {
		t.Fatalf("%d lines in the sink file, want 99", len(lines))
	}
	// Every good record, in order, masked and tagged; the poison record (42) is not among them.
	want := 0
	for _, l := range lines {
		if want == 42 {
			want++
		}
		var rec struct {
			N      *int   `json:"n"`
			Secret string `json:"secret"`
			Via    string `json:"via"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.N == nil {
			t.Fatalf("sink line %q is not a record with an id: %v", l, err)
		}
		if *rec.N != want || rec.Secret != "" || rec.Via != "wasmconnect" {
			t.Fatalf("sink line %q: want record %d, masked and tagged", l, want)
		}
		want++
	}
	if s := w.mustStatus(t, "tolerant"); s.Tasks[0].State != "RUNNING" {
		t.Fatalf("tolerant sink is %s: %s", s.Tasks[0].State, s.Tasks[0].Trace)
	}

	dlq := exec.Command(kcat, "-C", "-b", addr, "-t", "orders-dlq", "-c", "1", "-e", "-q", "-f", "%s\n%h\n")
	raw, err := dlq.Output()
	if err != nil {
		t.Fatalf("kcat -C orders-dlq: %v", err)
	}
	got := string(raw)
	for _, want := range []string{
		"this is not json",
		"__connect.errors.topic=orders",
		"__connect.errors.offset=42",
		"__connect.errors.stage=VALUE_CONVERTER",
		"__connect.errors.connector.name=tolerant",
		"__connect.errors.exception.message=",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("dead letter record lacks %q:\n%s", want, got)
		}
	}

	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "strict", "config": map[string]string{
		"connector.class": "FileStreamSink", "topics": "orders", "file": filepath.Join(files, "strict.txt"),
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
	}})
	s := w.waitTaskState(t, "strict", "FAILED", time.Minute)
	for _, want := range []string{"VALUE_CONVERTER", "orders-0@42"} {
		if !strings.Contains(s.Tasks[0].Trace, want) {
			t.Errorf("trace does not name %q:\n%s", want, s.Tasks[0].Trace)
		}
	}
}

// TestToleratedTransformFailuresKeepEveryOtherRecord runs a transform that fails one record in
// seven (Cast$Value to int32 of a line that is not a number) with errors.tolerance=all, in a
// source task and in a sink task with a dead letter queue, over enough records for many batches:
// the batches' memory (the converters' outputs, the producer's records, the poll buffers) is
// reused once the producer acknowledges a batch, and a record whose bytes were overwritten while
// the producer, the error log or the dead letter queue still held them would show here as a
// wrong, lost or repeated value.
func TestToleratedTransformFailuresKeepEveryOtherRecord(t *testing.T) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Fatalf("kcat is needed (apt-get install kcat): %v", err)
	}
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})
	const n = 30000
	var all strings.Builder
	var nums, words []string
	for i := 0; i < n; i++ {
		l := fmt.Sprint(i * 7919 % 100003)
		if i%7 == 3 {
			l = fmt.Sprintf("word-%d-%s", i, strings.Repeat("w", i%50))
			words = append(words, l)
		} else {
			nums = append(nums, l)
		}
		all.WriteString(l + "\n")
	}
	in := filepath.Join(files, "in.txt")
	if err := os.WriteFile(in, []byte(all.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	tolerant := func(cfg map[string]string) map[string]string {
		cfg["transforms"] = "cast"
		cfg["transforms.cast.type"] = "org.apache.kafka.connect.transforms.Cast$Value"
		cfg["transforms.cast.spec"] = "int32"
		cfg["errors.tolerance"] = "all"
		cfg["errors.log.enable"] = "true"
		cfg["errors.log.include.messages"] = "true"
		return cfg
	}
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "src", "config": tolerant(map[string]string{
		"connector.class": "FileStreamSource", "file": in, "topic": "nums", "tasks.max": "1",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false",
	})})
	size := fileSize(t, in)
	waitFor(t, 2*time.Minute, "the whole file's offset committed", func() bool { return sourcePosition(t, w, "src") == size })
	var got []string
	for _, v := range readTopic(t, addr, "nums") {
		got = append(got, string(v))
	}
	if msg := firstDifference(got, nums); msg != "" {
		t.Fatalf("source topic: %s", msg)
	}

	cmd := exec.Command(kcat, "-P", "-b", addr, "-t", "mixed")
	cmd.Stdin = strings.NewReader(all.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kcat -P: %v\n%s", err, out)
	}
	out := filepath.Join(files, "out.txt")
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": "sink", "config": tolerant(map[string]string{
		"connector.class": "FileStreamSink", "topics": "mixed", "file": out,
		"value.converter":                                 "org.apache.kafka.connect.storage.StringConverter",
		"errors.deadletterqueue.topic.name":               "mixed-dlq",
		"errors.deadletterqueue.topic.replication.factor": "1",
		"errors.deadletterqueue.context.headers.enable":   "true",
	})})
	waitFor(t, 2*time.Minute, "every number in the sink file", func() bool { return countLines(out) >= len(nums) })
	if msg := firstDifference(readLines(t, out), nums); msg != "" {
		t.Fatalf("sink file: %s", msg)
	}
	dlq := exec.Command(kcat, "-C", "-b", addr, "-t", "mixed-dlq", "-c", fmt.Sprint(len(words)), "-e", "-q", "-f", "%s|%h\n")
	raw, err := dlq.Output()
	if err != nil {
		t.Fatalf("kcat -C mixed-dlq: %v", err)
	}
	var dead []string
	for _, l := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		v, h, _ := strings.Cut(l, "|")
		if !strings.Contains(h, "__connect.errors.stage=TRANSFORMATION") {
			t.Fatalf("dead letter %q without the TRANSFORMATION stage: %s", v, h)
		}
		dead = append(dead, v)
	}
	if msg := firstDifference(dead, words); msg != "" {
		t.Fatalf("dead letter queue: %s", msg)
	}
}

// firstDifference describes where got and want first differ ("" if they do not).
func firstDifference(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("record %d is %q, want %q", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d records, want %d", len(got), len(want))
	}
	return ""
}
