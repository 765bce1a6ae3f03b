//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// BenchmarkFileSourceVsKcat measures records/s from a file into a topic through the FileStreamSource
// plugin, next to kcat -P of the same file into the same broker in the same run. Both write the
// lines as they are (StringConverter), so the bytes on the wire are the same; a JsonConverter run
// shows what the schema envelope costs.
//
//	go test -tags e2e -run '^$' -bench FileSourceVsKcat -benchtime 3x ./cmd/wasmconnect/
func BenchmarkFileSourceVsKcat(b *testing.B) {
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		pluginbuild.Missing(b, "kcat", "apt-get install kcat")
	}
	_, addr := startBroker(b)
	files := b.TempDir()
	w := startBenchWorker(b, "worker", addr, map[string]string{"plugin.fs.allow": files, "offset.flush.interval.ms": "10000"})
	const n = 200_000
	in := filepath.Join(files, "bench.txt")
	line := strings.Repeat("x", 90)
	f, err := os.Create(in)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		fmt.Fprintf(f, "%09d %s\n", i, line)
	}
	f.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)

	// A chain of transforms as a pipeline might use them: the line becomes a field of a map
	// (HoistField), a static field is added (InsertField), a field is masked (MaskField), and the
	// topic is renamed (RegexRouter).
	chain := map[string]string{
		"transforms":                     "hoist,insert,mask,route",
		"transforms.hoist.type":          "org.apache.kafka.connect.transforms.HoistField$Value",
		"transforms.hoist.field":         "line",
		"transforms.insert.type":         "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.insert.static.field": "origin",
		"transforms.insert.static.value": "bench",
		"transforms.mask.type":           "org.apache.kafka.connect.transforms.MaskField$Value",
		"transforms.mask.fields":         "origin",
		"transforms.route.type":          "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex":         "(.*)",
		"transforms.route.replacement":   "$1",
	}
	var source, sourceJSON, steady, transformedSteady, peer time.Duration
	for i := 0; i < b.N; i++ {
		total, flowing := timeSource(b, w, adm, in, fmt.Sprintf("bench-string-%d", i), "org.apache.kafka.connect.storage.StringConverter", n, nil)
		source += total
		steady += flowing
		total, _ = timeSource(b, w, adm, in, fmt.Sprintf("bench-json-%d", i), "org.apache.kafka.connect.json.JsonConverter", n, nil)
		sourceJSON += total
		_, flowing = timeSource(b, w, adm, in, fmt.Sprintf("bench-chain-%d", i), "org.apache.kafka.connect.json.JsonConverter", n, chain)
		transformedSteady += flowing
		topic := fmt.Sprintf("bench-kcat-%d", i)
		createTopic(b, adm, topic)
		start := time.Now()
		if out, err := exec.Command(kcat, "-P", "-b", addr, "-t", topic, "-l", in).CombinedOutput(); err != nil {
			b.Fatalf("kcat: %v\n%s", err, out)
		}
		waitEnd(b, adm, topic, n)
		peer += time.Since(start)
	}
	perSec := func(d time.Duration) float64 { return float64(n*b.N) / d.Seconds() }
	b.ReportMetric(perSec(source), "source-rec/s")
	b.ReportMetric(perSec(steady), "source-steady-rec/s")
	b.ReportMetric(perSec(sourceJSON), "source-json-rec/s")
	b.ReportMetric(perSec(peer), "kcat-rec/s")
	b.ReportMetric(perSec(source)/perSec(peer), "source/kcat")
	b.ReportMetric(perSec(transformedSteady), "source-4-transforms-steady-rec/s")
	b.ReportMetric(perSec(transformedSteady)/perSec(steady), "transforms/plain")
}

// timeSource creates a file source into a new topic and returns the time until the topic holds
// every line, from the create request (total: includes starting the connector and its task) and
// from the first record written (flowing).
func timeSource(b *testing.B, w *worker, adm *kadm.Client, file, name, converter string, n int, extra map[string]string) (total, flowing time.Duration) {
	createTopic(b, adm, name)
	cfg := map[string]string{
		"connector.class": "FileStreamSource", "file": file, "topic": name, "value.converter": converter,
		"batch.size": "2000",
	}
	for k, v := range extra {
		cfg[k] = v
	}
	start := time.Now()
	flowing = flowingTopic(b, adm, name, n, func() {
		w.mustCall(b, 201, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
	})
	total = time.Since(start)
	w.mustCall(b, 204, "DELETE", "/connectors/"+name, nil)
	return total, flowing
}

// createTopic creates the topic up front, for both contenders alike: the admin client caches a
// topic's absence for seconds, which would otherwise be measured instead of the writes.
func createTopic(b *testing.B, adm *kadm.Client, topic string) {
	if _, err := adm.CreateTopic(context.Background(), 1, -1, nil, topic); err != nil {
		b.Fatalf("creating %s: %v", topic, err)
	}
	waitFor(b, 10*time.Second, "topic "+topic, func() bool {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		return err == nil && ends.Error() == nil
	})
}

func waitEnd(b *testing.B, adm *kadm.Client, topic string, n int) {
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		if err == nil {
			var total int64
			ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
			if total >= int64(n) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatalf("topic %s did not reach %d records", topic, n)
}
