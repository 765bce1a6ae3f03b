package main

import (
	"fmt"
	"os"
	"runtime/debug"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// version is the plugin's version, which its records carry in a faulty.version header; the hot
// reload test builds a second version with -ldflags=-X=main.version=2.0.0.
var version = "1.0.0"

func init() {
	sdk.RegisterSource(sdk.Info{
		Name:    "Faulty",
		Class:   "wasmconnect.testing.FaultySource",
		Aliases: []string{"FaultySource"},
		Version: version,
		Config: []sdk.ConfigDef{
			{Name: "fault", Default: new("none"), Importance: sdk.High, Validator: sdk.OneOf("none", "trap", "loop", "oom", "panic", "fs"),
				Documentation: "What to do on poll after.polls+1: none, trap, loop, oom, panic or fs."},
			{Name: "after.polls", Type: sdk.TypeInt, Default: new("0"), Importance: sdk.Medium,
				Documentation: "How many polls succeed before the fault."},
			{Name: "topic", Default: new("faulty"), Importance: sdk.Medium, Documentation: "The topic of the records."},
			{Name: "file", Default: new("/etc/passwd"), Importance: sdk.Low, Documentation: "The file the fs fault opens."},
			{Name: "poll.interval.ms", Type: sdk.TypeInt, Default: new("0"), Importance: sdk.Low,
				Documentation: "Minimum time between records; polls in between return nothing (0: a record on every poll)."},
		},
	}, connector{})
}

func main() {}

type connector struct{}

func (connector) Validate(sdk.Config) map[string][]string { return nil }

// TaskConfigs makes tasks.max tasks, so that cluster tests have work to spread.
func (connector) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	out := make([]sdk.Config, maxTasks)
	for i := range out {
		out[i] = cfg.Clone()
		out[i]["task.index"] = fmt.Sprint(i)
	}
	return out, nil
}

func (connector) NewTask() sdk.SourceTask { return &task{} }

type task struct {
	ctx   *sdk.TaskContext
	fault string
	after int
	topic string
	file  string
	polls int

	interval time.Duration
	last     time.Time
}

func (t *task) Start(ctx *sdk.TaskContext, cfg sdk.Config) (err error) {
	t.ctx, t.fault, t.topic, t.file = ctx, cfg["fault"], cfg["topic"], cfg["file"]
	if t.after, err = cfg.Int("after.polls", 0); err != nil {
		return err
	}
	ms, err := cfg.Int("poll.interval.ms", 0)
	t.interval = time.Duration(ms) * time.Millisecond
	return err
}

// hog keeps the oom fault's allocations reachable.
var hog [][]byte

func (t *task) Poll() ([]sdk.SourceRecord, error) {
	if t.interval > 0 && time.Since(t.last) < t.interval {
		return nil, nil
	}
	t.last = time.Now()
	t.polls++
	if t.polls > t.after {
		switch t.fault {
		case "trap":
			t.ctx.Logf(sdk.LevelWarn, "faulty: trapping on poll %d", t.polls)
			done := make(chan struct{})
			go func() {
				var f func()
				f() // nil function call: a runtime panic nobody recovers on this goroutine
				close(done)
			}()
			<-done
		case "loop":
			t.ctx.Logf(sdk.LevelWarn, "faulty: looping forever on poll %d", t.polls)
			for {
			}
		case "oom":
			t.ctx.Logf(sdk.LevelWarn, "faulty: allocating until out of memory on poll %d", t.polls)
			debug.SetGCPercent(-1) // no collections on the way: reach the cap fast, well within the call timeout
			for size := 1 << 20; ; size = min(2*size, 256<<20) {
				b := make([]byte, size)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1 // touch the pages (one store per page: byte loops are slow under the call timeout)
				}
				hog = append(hog, b)
			}
		case "panic":
			panic(fmt.Sprintf("faulty: deliberate panic on poll %d", t.polls))
		case "fs":
			f, err := t.ctx.OpenFile(t.file, os.O_RDONLY, 0)
			if err != nil {
				return nil, err
			}
			f.Close()
			return nil, fmt.Errorf("faulty: %s could be opened: it should lie outside plugin.fs.allow", t.file)
		}
	}
	return []sdk.SourceRecord{{
		Topic:           t.topic,
		Value:           sdk.String(fmt.Sprintf("poll %d", t.polls)),
		Headers:         []sdk.Header{{Key: "faulty.version", Value: sdk.String(version)}},
		Timestamp:       time.Now(),
		SourcePartition: map[string]any{"faulty": t.ctx.Connector(), "task": t.ctx.Task()},
		SourceOffset:    map[string]any{"poll": t.polls},
	}}, nil
}

func (t *task) Commit() error { return nil }
func (t *task) Stop() error   { return nil }
