//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The chaos run's knobs. The defaults are the short form, which make test runs; make chaos runs the
// long one:
//
//	go test -tags e2e -run '^TestChaos$' -v ./cmd/wasmconnect/ -args -chaos.duration=2m -chaos.rate=1000
var (
	chaosDuration = flag.Duration("chaos.duration", 30*time.Second, "how long TestChaos kills and pauses processes")
	chaosRate     = flag.Int("chaos.rate", 500, "records per second into each of TestChaos's pipelines")
	chaosSeed     = flag.Uint64("chaos.seed", 0, "seed of TestChaos's choice of victims and pauses (0: from the clock)")
)

// chaosInterval is the time between two chaos events.
const chaosInterval = 10 * time.Second

// Datagen's share of TestChaos: tasks.max tasks, each writing its records with one seed.
const chaosDatagenTasks, chaosDatagenSeed = 3, 7

// TestChaos runs three worker processes and a broker process under load while processes die: every
// 10 s a random worker is killed with SIGKILL (and restarted a few seconds later) or paused with
// SIGSTOP (and resumed with SIGCONT), and once the broker is killed with SIGKILL and restarted on
// its data directory. Then every pipeline's output is compared with its input: no record may be
// lost, and the duplicates are bounded by what was in flight, that is not committed, when a process
// stopped and when it came back (see chaosRun.snapshot). Every task must run again at the end, on
// all three workers. The table it prints is README.md's.
//
// The workers have exactly.once.source.support=enabled (a worker setting, as in Kafka Connect), so
// every source writes in transactions. Four pipelines, each FileStreamSource or datagen -> topic ->
// FileStreamSink:
//   - lines: a file, line by line;
//   - xform: a file through a chain of three transformations (HoistField, InsertField, RegexRouter);
//   - eos: a file, its sink reading with isolation.level=read_committed; the topic is also checked
//     with a read_committed reader of the test's own, where exactly-once allows no duplicate at all;
//   - datagen: datagen's orders with tasks.max=3 into a topic of three partitions.
//
// The other sinks read uncommitted records too, so an aborted transaction's records reach them:
// their bounds count what the sources had not committed as well.
func TestChaos(t *testing.T) {
	seed := *chaosSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("chaos for %v at %d records/s per pipeline, seed %d (-chaos.seed to repeat the choices)", *chaosDuration, *chaosRate, seed)
	c := newChaosRun(t, seed)
	start := time.Now()
	c.run()
	t.Logf("%d events in %v; draining", len(c.events), time.Since(start).Round(time.Second))
	c.drain()
	rows := c.tally()
	t.Logf("chaos results (%v of chaos, %v in all, seed %d):\n%s", *chaosDuration, time.Since(start).Round(time.Second), seed, chaosTable(rows))
	for _, r := range rows {
		if r.unknown > 0 {
			t.Errorf("%s: %d output records are not input records, e.g. %q", r.name, r.unknown, r.unknownExample)
		}
		if r.lost > 0 {
			t.Errorf("%s: %d of %d input records lost, e.g. record %d", r.name, r.lost, r.input, r.lostExample)
		}
		if r.dups > r.bound {
			t.Errorf("%s: %d duplicates, more than the %d records in flight at the events", r.name, r.dups, r.bound)
		}
	}
}

// chaosPipeline is one source -> topic -> sink pipeline of TestChaos.
type chaosPipeline struct {
	name         string
	source, sink string // connector names
	topic        string // what the source writes (after its transformations) and the sink reads
	in, out      string // the source's input file ("" for datagen) and the sink's output file
	// sourceExactlyOnce: the sink reads committed records only, so its duplicates can only be the
	// sink's own.
	sourceExactlyOnce bool
	// id is the number of the input record a record value's text (the payload in the topic, a
	// line of the sink's file) carries.
	id func(text string) (int, bool)
}

type chaosRun struct {
	t         *testing.T
	rng       *rand.Rand
	addr      string
	broker    *process
	workers   []*worker
	adm       *kadm.Client
	pipelines []*chaosPipeline
	watch     *chaosWatch
	fed       int // lines appended to each input file so far
	feedStop  chan struct{}
	feedDone  chan error
	datagenN  int            // records each datagen task writes
	bound     map[string]int // pipeline -> records in flight at the events so far
	down      *worker        // the worker killed or paused now, if any
	events    []string
}

func newChaosRun(t *testing.T, seed uint64) *chaosRun {
	broker, addr := startBroker(t)
	files := t.TempDir()
	c := &chaosRun{t: t, rng: rand.New(rand.NewPCG(seed, seed>>32)), addr: addr, broker: broker, bound: map[string]int{}}
	props := map[string]string{
		"plugin.fs.allow":             files,
		"exactly.once.source.support": "enabled",
		// A killed or paused worker leaves the group sooner, so that more of the run is failover.
		"session.timeout.ms":    "6000",
		"heartbeat.interval.ms": "2000",
	}
	for i := 1; i <= 3; i++ {
		c.workers = append(c.workers, startWorker(t, fmt.Sprintf("worker%d", i), addr, props))
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	c.adm = kadm.NewClient(cl)

	file := func(name string, id func(string) (int, bool), exactlyOnce bool) *chaosPipeline {
		return &chaosPipeline{name: name, source: name + "-source", sink: name + "-sink", topic: "chaos-" + name,
			in: filepath.Join(files, name+"-in.txt"), out: filepath.Join(files, name+"-out.txt"), sourceExactlyOnce: exactlyOnce, id: id}
	}
	lines, eos := file("lines", numbered("lines-"), false), file("eos", numbered("eos-"), true)
	xform := file("xform", hoisted("xform-"), false)
	xform.topic = "chaos-xform-routed"
	datagen := &chaosPipeline{name: "datagen", source: "datagen-source", sink: "datagen-sink", topic: "chaos-datagen",
		out: filepath.Join(files, "datagen-out.txt")}
	c.pipelines = []*chaosPipeline{lines, xform, eos, datagen}
	// datagen writes about as many records per second as a file pipeline, and stops when the chaos
	// does (later, if its tasks were held up): max.interval is the longest wait between two records
	// of one task, so a task writes 2000/max.interval records per second.
	perTask := max(1, *chaosRate/chaosDatagenTasks)
	c.datagenN = perTask * int(chaosDuration.Seconds())
	c.watch = newChaosWatch(t, addr, c.pipelines, c.datagenN)
	datagen.id = c.watch.datagenID

	for _, p := range c.pipelines {
		parts := int32(1)
		if p == datagen {
			parts = chaosDatagenTasks
		}
		if _, err := c.adm.CreateTopic(context.Background(), parts, -1, nil, p.topic); err != nil {
			t.Fatalf("creating %s: %v", p.topic, err)
		}
		if p.in != "" {
			writeLines(t, p.in, p.name+"-", 0, 0)
		}
	}
	w := c.workers[0]
	for _, p := range []*chaosPipeline{lines, eos} {
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": p.source, "config": map[string]string{
			"connector.class": "FileStreamSource", "file": p.in, "topic": p.topic,
		}})
	}
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": xform.source, "config": map[string]string{
		"connector.class": "FileStreamSource", "file": xform.in, "topic": "chaos-xform",
		"transforms":                   "hoist,tag,route",
		"transforms.hoist.type":        "org.apache.kafka.connect.transforms.HoistField$Value",
		"transforms.hoist.field":       "line",
		"transforms.tag.type":          "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.tag.static.field":  "via",
		"transforms.tag.static.value":  "chaos",
		"transforms.route.type":        "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex":       "chaos-(.*)",
		"transforms.route.replacement": "chaos-$1-routed",
	}})
	w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": datagen.source, "config": map[string]string{
		"connector.class": "DatagenConnector", "kafka.topic": datagen.topic, "quickstart": "orders",
		"tasks.max": strconv.Itoa(chaosDatagenTasks), "iterations": strconv.Itoa(c.datagenN),
		"max.interval": strconv.Itoa(max(1, 2000/perTask)), "random.seed": strconv.Itoa(chaosDatagenSeed),
	}})
	for _, p := range c.pipelines {
		cfg := map[string]string{"connector.class": "FileStreamSink", "file": p.out, "topics": p.topic}
		if p.sourceExactlyOnce {
			cfg["consumer.override.isolation.level"] = "read_committed"
		}
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": p.sink, "config": cfg})
	}
	waitSpread(t, w, c.tasks(), 3, 2*time.Minute)
	return c
}

// tasks is how many tasks the pipelines have.
func (c *chaosRun) tasks() int { return 2*len(c.pipelines) + chaosDatagenTasks - 1 }

// numbered is the id of lines "<prefix><n>".
func numbered(prefix string) func(string) (int, bool) {
	return func(s string) (int, bool) {
		n, err := strconv.Atoi(strings.TrimPrefix(s, prefix))
		return n, err == nil && strings.HasPrefix(s, prefix) && n >= 0
	}
}

// hoisted is the id of the xform pipeline's values, {"line":"<prefix><n>","via":"chaos"}.
func hoisted(prefix string) func(string) (int, bool) {
	line := numbered(prefix)
	return func(s string) (int, bool) {
		var v struct{ Line, Via string }
		if json.Unmarshal([]byte(s), &v) != nil || v.Via != "chaos" {
			return 0, false
		}
		return line(v.Line)
	}
}

// run feeds the input files and sets off the events: one per chaosInterval on a worker (the first
// a kill, the second a pause, then chosen at random), and the broker's kill half-way.
func (c *chaosRun) run() {
	c.feedStop, c.feedDone = make(chan struct{}), make(chan error, 1)
	go c.feed()
	type event struct {
		at time.Duration
		do func()
	}
	var events []event
	n := int(*chaosDuration / chaosInterval)
	for k := 1; k <= n; k++ {
		events = append(events, event{time.Duration(k) * chaosInterval, func() { c.workerEvent(k) }})
	}
	events = append(events, event{time.Duration(n/2)*chaosInterval + chaosInterval/2, c.brokerEvent})
	slices.SortStableFunc(events, func(a, b event) int { return int(a.at - b.at) })
	start := time.Now()
	for _, e := range events {
		time.Sleep(time.Until(start.Add(e.at)))
		e.do()
	}
	time.Sleep(time.Until(start.Add(*chaosDuration)))
	close(c.feedStop)
	if err := <-c.feedDone; err != nil {
		c.t.Fatalf("feeding the input files: %v", err)
	}
}

// feed appends rate/10 lines to each input file every 100 ms until feedStop is closed.
func (c *chaosRun) feed() {
	step := max(1, *chaosRate/10)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.feedStop:
			c.feedDone <- nil
			return
		case <-tick.C:
		}
		for _, p := range c.pipelines {
			if p.in == "" {
				continue
			}
			if err := appendLines(p.in, p.name+"-", c.fed, c.fed+step); err != nil {
				c.feedDone <- err
				return
			}
		}
		c.fed += step
	}
}

// workerEvent kills a random worker with SIGKILL and restarts it 1-4 s later, or pauses it with
// SIGSTOP for 2-9 s (sometimes shorter than session.timeout.ms, sometimes longer) and resumes it.
func (c *chaosRun) workerEvent(k int) {
	w := c.workers[c.rng.IntN(len(c.workers))]
	kill := k == 1 || (k > 2 && c.rng.IntN(2) == 0)
	if kill {
		down := time.Duration(1000+c.rng.IntN(3000)) * time.Millisecond
		c.down = w
		w.stop(syscall.SIGKILL)
		c.snapshot(fmt.Sprintf("kill -9 %s, restart after %v", w.name, down))
		time.Sleep(down)
		c.snapshot("restart " + w.name)
		w.start()
		c.down = nil
		return
	}
	paused := time.Duration(2000+c.rng.IntN(7000)) * time.Millisecond
	c.down = w
	w.signal(syscall.SIGSTOP)
	c.snapshot(fmt.Sprintf("SIGSTOP %s for %v", w.name, paused))
	time.Sleep(paused)
	c.snapshot("SIGCONT " + w.name)
	w.signal(syscall.SIGCONT)
	c.down = nil
}

// brokerEvent kills the broker with SIGKILL and restarts it on its data directory, saying how many
// transactions the kill left open: the restarted broker ends each with an abort marker.
func (c *chaosRun) brokerEvent() {
	c.snapshot("kill -9 broker")
	before := strings.Count(c.broker.logText(), abortMarkerLine)
	kill9AndRestart(c.t, c.broker, c.addr)
	c.snapshot(fmt.Sprintf("broker restarted, %d open transactions aborted", strings.Count(c.broker.logText(), abortMarkerLine)-before))
}

// abortMarkerLine is what the broker logs for each abort marker of a transaction a kill left open.
const abortMarkerLine = "wrote the abort marker of a transaction the killed broker left open"

// snapshot adds to each pipeline's bound the records it has in flight now, that is not committed,
// which a task restarted from its committed offsets may deliver again:
//   - the source's: the records it wrote to the topic past its committed source offset (what a
//     read_uncommitted sink may see twice: in an aborted transaction, and again);
//   - the sink's: the records of the topic past its committed consumer offset (which it may have
//     written to its file already), up to the end of the topic or, for a read_committed sink, up to
//     the last stable offset.
//
// The test's own reader is first brought to the ends of the topics, so that what the stopped
// process wrote is counted; the committed source offsets are what a worker that runs reads.
func (c *chaosRun) snapshot(event string) {
	t := c.t
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	topics := make([]string, 0, len(c.pipelines))
	for _, p := range c.pipelines {
		topics = append(topics, p.topic)
	}
	ends, stable := c.watch.catchUp(ctx, t, c.adm, topics)
	var parts []string
	for _, p := range c.pipelines {
		var n int
		if p.sourceExactlyOnce {
			n = c.sinkInFlight(ctx, p, stable) // a read_committed sink reads up to the last stable offset
		} else {
			n = c.sinkInFlight(ctx, p, ends) + c.watch.sourceInFlight(t, p, c.sourceOffsets(p))
		}
		c.bound[p.name] += n
		parts = append(parts, fmt.Sprintf("%s %d", p.name, n))
	}
	c.events = append(c.events, event)
	t.Logf("%s %s: in flight %s", time.Now().Format("15:04:05.000"), event, strings.Join(parts, ", "))
}

// sourceOffsets are a pipeline's committed source offsets, from GET /connectors/{source}/offsets
// on a worker that runs (which reads the offsets topic to its end first).
func (c *chaosRun) sourceOffsets(p *chaosPipeline) []sourceOffset {
	var offs struct {
		Offsets []sourceOffset `json:"offsets"`
	}
	waitFor(c.t, time.Minute, "the committed offsets of "+p.source, func() bool {
		for _, w := range c.workers {
			if w == c.down {
				continue
			}
			if code, b := w.call(c.t, "GET", "/connectors/"+p.source+"/offsets", nil); code == 200 && json.Unmarshal(b, &offs) == nil {
				return true
			}
		}
		return false
	})
	return offs.Offsets
}

// sourceOffset is a committed offset of a file source or a datagen task.
type sourceOffset struct {
	Partition struct {
		Task int `json:"task.id"`
	} `json:"partition"`
	Offset struct {
		Position  int64 `json:"position"`
		Iteration int   `json:"current.iteration"`
	} `json:"offset"`
}

// sinkInFlight is how many records of the pipeline's topic its sink has not committed.
func (c *chaosRun) sinkInFlight(ctx context.Context, p *chaosPipeline, ends kadm.ListedOffsets) int {
	// The group coordinator may still be loading after the broker's restart: asked again until ctx ends.
	var groups kadm.OffsetResponses
	for {
		var err error
		if groups, err = c.adm.FetchOffsets(ctx, "connect-"+p.sink); err == nil {
			err = groups.Error()
		}
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			c.t.Fatalf("offsets of connect-%s: %v", p.sink, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	n := 0
	ends.Each(func(o kadm.ListedOffset) {
		if o.Topic != p.topic {
			return
		}
		at := int64(0)
		if g, ok := groups.Lookup(p.topic, o.Partition); ok && g.At > 0 {
			at = g.At
		}
		n += int(max(0, o.Offset-at))
	})
	return n
}

// drain waits until every worker is back, with every connector and task RUNNING and the tasks
// spread over the three workers, and every input record has reached its sink's file.
func (c *chaosRun) drain() {
	t := c.t
	for _, w := range c.workers {
		w.waitReady(t)
	}
	var last map[string]status
	waitFor(t, 2*time.Minute, "every connector and task RUNNING, the tasks spread over the three workers", func() bool {
		st, ok := c.workers[0].allStatuses(t)
		if !ok {
			return false
		}
		last = st
		for _, s := range st {
			if s.Connector.State != "RUNNING" {
				return false
			}
		}
		spread, all := taskSpread(st, c.tasks())
		return all && imbalance(spread, 3) <= 1
	}, func() string { return describeStatuses(last) })
	var short []string
	waitFor(t, 3*time.Minute, "every input record in its sink's file", func() bool {
		short = short[:0]
		for _, p := range c.pipelines {
			if r := c.compare(p.name, c.input(p), c.sinkCounts(p)); r.lost > 0 {
				short = append(short, fmt.Sprintf("%s: %d of %d missing, e.g. record %d", p.name, r.lost, r.input, r.lostExample))
			}
		}
		return len(short) == 0
	}, func() string {
		st, _ := c.workers[0].allStatuses(t)
		return "\n  " + strings.Join(short, "\n  ") + describeStatuses(st)
	})
	// What is still in flight lands, so that the duplicates are counted in full.
	time.Sleep(3 * time.Second)
}

// describeStatuses lists the tasks and where they run, and the traces of those that failed.
func describeStatuses(st map[string]status) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(st)) {
		if cn := st[name].Connector; cn.State != "RUNNING" {
			fmt.Fprintf(&b, "\n  %s %s on %s", name, cn.State, cn.WorkerID)
		}
		for _, tk := range st[name].Tasks {
			fmt.Fprintf(&b, "\n  %s-%d %s on %s", name, tk.ID, tk.State, tk.WorkerID)
			if tk.Trace != "" {
				fmt.Fprintf(&b, ": %s", strings.SplitN(tk.Trace, "\n", 2)[0])
			}
		}
	}
	return b.String()
}

// input is how many records went into a pipeline.
func (c *chaosRun) input(p *chaosPipeline) int {
	if p.in == "" {
		return chaosDatagenTasks * c.datagenN
	}
	return c.fed
}

// sinkCounts counts the lines of a pipeline's sink file by input record; -1 counts the lines that
// are no input record.
func (c *chaosRun) sinkCounts(p *chaosPipeline) map[int]int {
	counts := map[int]int{}
	b, err := os.ReadFile(p.out)
	if err != nil {
		return counts
	}
	for _, l := range bytes.Split(bytes.TrimSuffix(b, []byte{'\n'}), []byte{'\n'}) {
		if len(l) == 0 {
			continue
		}
		if id, ok := p.id(string(l)); ok {
			counts[id]++
		} else {
			counts[-1]++
			c.watch.noteUnknown(p.name, string(l))
		}
	}
	return counts
}

// chaosRow is a line of TestChaos's table.
type chaosRow struct {
	name                             string
	input, output, lost, dups, bound int
	unknown, lostExample             int
	unknownExample                   string
}

func (c *chaosRun) compare(name string, input int, counts map[int]int) chaosRow {
	r := chaosRow{name: name, input: input, unknown: counts[-1], unknownExample: c.watch.unknownExample(name)}
	for id := range input {
		switch n := counts[id]; {
		case n == 0:
			if r.lost == 0 {
				r.lostExample = id
			}
			r.lost++
		default:
			r.dups += n - 1
		}
	}
	for id, n := range counts {
		r.output += n
		if id >= input { // beyond the input: not lost, but not an input record either
			r.unknown += n
		}
	}
	return r
}

// tally compares every output with its input: each sink's file, and the exactly-once topic as a
// read_committed reader sees it, where no duplicate is allowed.
func (c *chaosRun) tally() []chaosRow {
	var rows []chaosRow
	for _, p := range c.pipelines {
		r := c.compare(p.name, c.input(p), c.sinkCounts(p))
		r.bound = c.bound[p.name]
		rows = append(rows, r)
		if p.sourceExactlyOnce {
			r := c.compare(p.name+" (topic, read_committed)", c.input(p), c.watch.committedCounts(c.t, c.input(p)))
			rows = append(rows, r)
		}
	}
	return rows
}

func chaosTable(rows []chaosRow) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "pipeline\tinput records\toutput records\tlost\tduplicates\tbound\t")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t\n", r.name, r.input, r.output, r.lost, r.dups, r.bound)
	}
	w.Flush()
	return b.String()
}

// chaosWatch reads the pipelines' topics as they are written (uncommitted records too: what the
// sources wrote), with a reader of the test's own, so that a snapshot knows how far each source
// wrote without scanning the topics again. It keeps control records, so that its position reaches
// the end of each partition.
type chaosWatch struct {
	byTopic  map[string]*chaosPipeline
	eosTopic string
	datagenN int

	addr      string
	mu        sync.Mutex
	next      map[string]map[int32]int64 // topic -> partition -> next offset
	head      map[string]int             // file pipeline -> records it wrote (its highest line + 1)
	taskHead  [chaosDatagenTasks]int     // datagen task -> records it wrote
	byPayload map[string]int             // datagen: canonical payload -> id
	unknown   map[string]string
}

func newChaosWatch(t *testing.T, addr string, pipelines []*chaosPipeline, datagenN int) *chaosWatch {
	cw := &chaosWatch{byTopic: map[string]*chaosPipeline{}, datagenN: datagenN, addr: addr, next: map[string]map[int32]int64{},
		head: map[string]int{}, byPayload: map[string]int{}, unknown: map[string]string{}}
	var topics []string
	for _, p := range pipelines {
		cw.byTopic[p.topic] = p
		topics = append(topics, p.topic)
		if p.sourceExactlyOnce {
			cw.eosTopic = p.topic
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.KeepControlRecords(), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ConsumeTopics(topics...))
	if err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer cl.Close()
		for ctx.Err() == nil {
			cl.PollFetches(ctx).EachRecord(cw.record)
		}
	}()
	return cw
}

// payloadText is the text of a JsonConverter envelope's payload: a string's characters, else the
// JSON itself.
func payloadText(value []byte) string {
	var env struct{ Payload json.RawMessage }
	if json.Unmarshal(value, &env) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(env.Payload, &s) == nil {
		return s
	}
	return string(env.Payload)
}

// record notes a record of a pipeline's topic, once.
func (cw *chaosWatch) record(r *kgo.Record) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if cw.next[r.Topic] == nil {
		cw.next[r.Topic] = map[int32]int64{}
	}
	if r.Offset < cw.next[r.Topic][r.Partition] {
		return // read already, by the client before
	}
	cw.next[r.Topic][r.Partition] = r.Offset + 1
	if !r.Attrs.IsControl() {
		cw.wrote(r)
	}
}

// wrote notes a record a source wrote (committed or not), with cw.mu held.
func (cw *chaosWatch) wrote(r *kgo.Record) {
	p := cw.byTopic[r.Topic]
	if p.in != "" {
		if id, ok := p.id(payloadText(r.Value)); ok {
			cw.head[p.name] = max(cw.head[p.name], id+1)
		}
		return
	}
	task, iter := -1, -1
	for _, h := range r.Headers {
		switch h.Key {
		case "task.id":
			task, _ = strconv.Atoi(string(h.Value))
		case "current.iteration":
			iter, _ = strconv.Atoi(string(h.Value))
		}
	}
	if task < 0 || task >= chaosDatagenTasks || iter < 0 {
		return
	}
	cw.taskHead[task] = max(cw.taskHead[task], iter+1)
	cw.byPayload[canonicalJSON(payloadText(r.Value))] = task*cw.datagenN + iter
}

// canonicalJSON is s re-encoded with sorted keys and no spaces, so that a value reads the same in
// the topic and in the sink's file.
func canonicalJSON(s string) string {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (cw *chaosWatch) datagenID(line string) (int, bool) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	id, ok := cw.byPayload[canonicalJSON(line)]
	return id, ok
}

// catchUp waits until the reader has reached the current ends of the pipelines' topics and
// returns them, with the last stable offsets (the end a read_committed reader reaches).
func (cw *chaosWatch) catchUp(ctx context.Context, t *testing.T, adm *kadm.Client, topics []string) (ends, stable kadm.ListedOffsets) {
	var err error
	for {
		if ends, err = adm.ListEndOffsets(ctx, topics...); err == nil && ends.Error() == nil {
			if stable, err = adm.ListCommittedOffsets(ctx, topics...); err == nil && stable.Error() == nil {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("listing the ends of the topics: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	reached := func() bool {
		cw.mu.Lock()
		defer cw.mu.Unlock()
		ok := true
		ends.Each(func(o kadm.ListedOffset) { ok = ok && cw.next[o.Topic][o.Partition] >= o.Offset })
		return ok
	}
	for !reached() {
		if ctx.Err() != nil {
			cw.mu.Lock()
			defer cw.mu.Unlock()
			t.Fatalf("the test's reader did not reach the ends of the topics %v: it is at %v", ends, cw.next)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return ends, stable
}

// sourceInFlight is how many records a pipeline's source wrote past its committed offsets.
func (cw *chaosWatch) sourceInFlight(t *testing.T, p *chaosPipeline, committed []sourceOffset) int {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if p.in != "" {
		var pos int64
		for _, o := range committed {
			pos = o.Offset.Position
		}
		return max(0, cw.head[p.name]-linesBefore(t, p.in, pos))
	}
	var at [chaosDatagenTasks]int
	for _, o := range committed {
		if o.Partition.Task >= 0 && o.Partition.Task < chaosDatagenTasks {
			at[o.Partition.Task] = o.Offset.Iteration
		}
	}
	n := 0
	for task := range chaosDatagenTasks {
		n += max(0, cw.taskHead[task]-at[task])
	}
	return n
}

// committedCounts reads the exactly-once topic as a read_committed consumer and counts its
// records by input record, reading until it has seen want input records and 2 s more (or 30 s).
func (cw *chaosWatch) committedCounts(t *testing.T, want int) map[int]int {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cw.addr), kgo.ConsumeTopics(cw.eosTopic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	p := cw.byTopic[cw.eosTopic]
	counts := map[int]int{}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			id, ok := p.id(payloadText(r.Value))
			if !ok {
				id = -1
			}
			counts[id]++
		})
		cancel()
		if len(counts) >= want && deadline.Sub(time.Now()) > 2*time.Second {
			deadline = time.Now().Add(2 * time.Second)
		}
	}
	return counts
}

func (cw *chaosWatch) noteUnknown(pipeline, line string) {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	if _, ok := cw.unknown[pipeline]; !ok {
		cw.unknown[pipeline] = line
	}
}

func (cw *chaosWatch) unknownExample(pipeline string) string {
	cw.mu.Lock()
	defer cw.mu.Unlock()
	return cw.unknown[pipeline]
}
