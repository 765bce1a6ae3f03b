package task

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/metrics"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// BenchmarkSourceFileToTopic runs the source loop as the worker does, with the real built-in
// FileStreamSource and JsonConverter modules, against an in-process broker, and a plain franz-go
// producer of the same file next to it, taking turns: the ratio is what the loop costs over the
// client it drives. The chain variant runs HoistField+InsertField+RegexRouter as one fused
// TRANSFORM_CHAIN call, as the worker does. Profile the loop with -cpuprofile; -benchmem's
// allocs/op are per 200,000 records.
//
//	go test -run '^$' -bench SourceFileToTopic -benchtime 3x -benchmem ./runtime/task/
func BenchmarkSourceFileToTopic(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchSourceFileToTopic(b, false) })
	b.Run("chain", func(b *testing.B) { benchSourceFileToTopic(b, true) })
}

func benchSourceFileToTopic(b *testing.B, chain bool) {
	const lines = 200_000
	dir := pluginbuild.DirOf(b, "plugins/file", "plugins/transforms")
	files := b.TempDir()
	in := filepath.Join(files, "in.txt")
	f, err := os.Create(in)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < lines; i++ {
		fmt.Fprintf(w, "%09d %s\n", i, strings.Repeat("x", 90))
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{dir}, FSAllow: []string{files}, CallTimeout: 10 * time.Second,
		CacheDir: filepath.Join(os.TempDir(), "wasmconnect-task-test-cache"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close(ctx)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(1))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	admCl, err := kgo.NewClient(kgo.SeedBrokers(addrs...))
	if err != nil {
		b.Fatal(err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	reg := metrics.New()

	b.ResetTimer()
	var loop, peer, loopCPU, peerCPU time.Duration
	for i := 0; i < b.N; i++ {
		topic := fmt.Sprintf("loop-%d", i)
		cpu := processCPU(b)
		loop += timeTopic(b, adm, topic, lines, func(done <-chan struct{}) {
			runFileSource(b, h, reg.Task(connect.TaskID{Connector: topic}, connect.TypeSource), addrs, in, topic, chain, done)
		})
		loopCPU += processCPU(b) - cpu
		topic = fmt.Sprintf("peer-%d", i)
		cpu = processCPU(b)
		peer += timeTopic(b, adm, topic, lines, func(<-chan struct{}) { produceLines(b, addrs, in, topic) })
		peerCPU += processCPU(b) - cpu
	}
	perSec := func(d time.Duration) float64 { return float64(lines*b.N) / d.Seconds() }
	perRecord := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(lines*b.N) }
	b.ReportMetric(perSec(loop), "loop-rec/s")
	b.ReportMetric(perSec(peer), "franz-go-rec/s")
	b.ReportMetric(perSec(loop)/perSec(peer), "loop/franz-go")
	// CPU time of the whole process (broker included, the same work for both) per record: a busy
	// machine disturbs it less than the rates.
	b.ReportMetric(perRecord(loopCPU), "loop-cpu-µs/rec")
	b.ReportMetric(perRecord(peerCPU), "franz-go-cpu-µs/rec")
}

// processCPU is the CPU time (user and system) the process has used so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timeTopic creates topic, runs write until the topic holds n records (done is closed then), and
// returns the time from the first record in the topic to the n-th.
func timeTopic(b *testing.B, adm *kadm.Client, topic string, n int64, write func(done <-chan struct{})) time.Duration {
	if _, err := adm.CreateTopic(context.Background(), 1, 1, nil, topic); err != nil {
		b.Fatal(err)
	}
	done, ended := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(ended)
		write(done)
	}()
	defer func() { close(done); <-ended }()
	var first time.Time
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		if err != nil {
			continue
		}
		var got int64
		ends.Each(func(o kadm.ListedOffset) { got += o.Offset })
		now := time.Now()
		if got > 0 && first.IsZero() {
			first = now
		}
		if got >= n {
			return now.Sub(first)
		}
	}
	b.Fatalf("%s did not reach %d records", topic, n)
	return 0
}

// runFileSource runs a FileStreamSource task with JsonConverter, and with chain the fused chain
// HoistField+InsertField+RegexRouter, into topic until done is closed.
func runFileSource(b *testing.B, h *wasmhost.Host, m *metrics.Task, addrs []string, file, topic string, chain bool, done <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sess := h.NewSession(wasmhost.Env{Connector: topic})
	defer sess.Close(context.Background())
	open := func(class string, kind wire.Kind, role wire.Role, cfg map[string]string) *wasmhost.Object {
		p, err := h.Resolve(class, kind)
		if err != nil {
			b.Error(err)
			return nil
		}
		o, err := sess.Open(ctx, p, role, cfg)
		if err != nil {
			b.Error(err)
		}
		return o
	}
	plugin := open("FileStreamSource", wire.KindSource, wire.RoleTask, map[string]string{"file": file, "topic": topic, "batch.size": "2000"})
	json := map[string]string{"schemas.enable": "false"}
	key := open("org.apache.kafka.connect.json.JsonConverter", wire.KindConverter, wire.RoleConverter, json)
	value := open("org.apache.kafka.connect.json.JsonConverter", wire.KindConverter, wire.RoleConverter, json)
	var transforms Chain
	if chain {
		var steps []wasmhost.ChainStep
		for _, t := range []struct {
			class string
			cfg   map[string]string
		}{
			{"HoistField$Value", map[string]string{"field": "line"}},
			{"InsertField$Value", map[string]string{"topic.field": "topic", "static.field": "origin", "static.value": "bench"}},
			{"RegexRouter", map[string]string{"regex": "(.*)", "replacement": "$1"}},
		} {
			o := open(t.class, wire.KindTransformation, wire.RoleTransformation, t.cfg)
			steps = append(steps, wasmhost.ChainStep{Transform: o})
			transforms = append(transforms, Step{Alias: t.class, Class: t.class, Transform: o})
		}
		if b.Failed() {
			return
		}
		fc := wasmhost.NewChain(steps)
		if fc == nil {
			b.Error("the chain cannot run fused")
			return
		}
		transforms[0].Fused = fc
	}
	if b.Failed() {
		return
	}
	producer, err := kgo.NewClient(slices.Concat([]kgo.Opt{kgo.SeedBrokers(addrs...)}, ProducerOpts())...)
	if err != nil {
		b.Error(err)
		return
	}
	defer producer.Close()
	src := NewSource(SourceConfig{ID: connect.TaskID{Connector: topic}, Plugin: plugin, KeyConverter: key, ValueConverter: value,
		Chain: transforms, Producer: producer, Offsets: discardOffsets{}, FlushInterval: time.Second, FlushTimeout: 5 * time.Second,
		Metrics: m, Logger: slog.New(slog.DiscardHandler)})
	ran := make(chan error, 1)
	go func() { ran <- src.Run(ctx) }()
	select {
	case <-done:
		cancel()
		if err := <-ran; err != nil {
			b.Error(err)
		}
	case err := <-ran:
		b.Errorf("the source task ended: %v", err)
	}
}

type discardOffsets struct{}

func (discardOffsets) WriteOffsets(context.Context, string, map[string][]byte) error { return nil }

// produceLines writes each line of file to topic with a plain franz-go producer, as
// BenchmarkTable's peer does.
func produceLines(b *testing.B, addrs []string, file, topic string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		b.Error(err)
		return
	}
	defer cl.Close()
	f, err := os.Open(file)
	if err != nil {
		b.Error(err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cl.Produce(context.Background(), &kgo.Record{Value: slices.Clone(sc.Bytes())}, nil)
	}
	if err := cl.Flush(context.Background()); err != nil {
		b.Error(err)
	}
}
