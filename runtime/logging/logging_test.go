package logging

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

func TestComponentNames(t *testing.T) {
	for fn, want := range map[string]string{
		"github.com/wasmconnect/wasmconnect/runtime/task.(*Sink).run":        "wasmconnect.runtime.task",
		"github.com/wasmconnect/wasmconnect/wasmhost.(*Host).Validate.func1": "wasmconnect.wasmhost",
		"main.serve": "wasmconnect.cmd",
		"github.com/twmb/franz-go/pkg/kgo.(*Client).Produce": "github.com.twmb.franz-go.pkg.kgo",
	} {
		if got := componentOf(fn); got != want {
			t.Errorf("componentOf(%q) = %q, want %q", fn, got, want)
		}
	}
	var pc uintptr
	slog.New(handlerFunc(func(r slog.Record) { pc = r.PC })).Info("x")
	if got := Component(pc); got != "wasmconnect.runtime.logging" {
		t.Errorf("this package's logger is %q", got)
	}
}

type handlerFunc func(slog.Record)

func (f handlerFunc) Enabled(context.Context, slog.Level) bool      { return true }
func (f handlerFunc) Handle(_ context.Context, r slog.Record) error { f(r); return nil }
func (f handlerFunc) WithAttrs([]slog.Attr) slog.Handler            { return f }
func (f handlerFunc) WithGroup(string) slog.Handler                 { return f }

func TestLevelsInheritance(t *testing.T) {
	l := NewLevels("INFO")
	l.Register("a.b.c", "a.bc", "x")
	now := time.UnixMilli(1700000000000)

	// Setting a namespace creates its logger and sets every existing logger whose name starts with
	// it (Kafka's startsWith: a.bc too), sorted.
	if got := l.Set("a.b", "DEBUG", now); !slices.Equal(got, []string{"a.b", "a.b.c", "a.bc"}) {
		t.Errorf("Set(a.b) = %q", got)
	}
	lv, ok := l.Level("a.b.c")
	if !ok || lv.Level != "DEBUG" || lv.LastModified == nil || *lv.LastModified != 1700000000000 {
		t.Errorf("a.b.c = %+v %v", lv, ok)
	}
	// A logger that appears later inherits from its nearest dotted ancestor.
	if !l.Enabled("a.b.c.d", slog.LevelDebug) || l.Enabled("a.x", slog.LevelDebug) {
		t.Error("a.b.c.d should inherit DEBUG from a.b, a.x INFO from the root")
	}
	// A logger that exists but has no level of its own shows the inherited one, never modified.
	if lv, ok := l.Level("x"); !ok || lv.Level != "INFO" || lv.LastModified != nil {
		t.Errorf("x = %+v %v", lv, ok)
	}
	if _, ok := l.Level("nope"); ok {
		t.Error("a logger that never existed was found")
	}
	if _, ok := l.Level("a"); ok {
		t.Error("an ancestor that is no logger was found")
	}

	// A logger already at the level keeps its modification time.
	if got := l.Set("a.b.c", "DEBUG", now.Add(time.Hour)); !slices.Equal(got, []string{"a.b.c"}) {
		t.Errorf("Set(a.b.c) = %q", got)
	}
	if lv, _ := l.Level("a.b.c"); *lv.LastModified != 1700000000000 {
		t.Errorf("unchanged level got a new last_modified: %d", *lv.LastModified)
	}

	all := l.All()
	if len(all) != 4 || all["root"].Level != "INFO" || all["root"].LastModified != nil || all["a.bc"].Level != "DEBUG" {
		t.Errorf("All() = %+v", all)
	}

	// root, in any case, sets the root and every logger.
	got := l.Set("ROOT", "warn", now.Add(2*time.Hour))
	if !slices.Equal(got, []string{"a.b", "a.b.c", "a.bc", "root", "x"}) {
		t.Errorf("Set(root) = %q", got)
	}
	if lv, _ := l.Level("Root"); lv.Level != "WARN" || lv.LastModified == nil {
		t.Errorf("root = %+v", lv)
	}
	if all := l.All(); len(all) != 5 || all["x"].Level != "WARN" {
		t.Errorf("after root: %+v", all)
	}
	if l.Enabled("anything", slog.LevelInfo) || !l.Enabled("anything", slog.LevelWarn) {
		t.Error("root WARN not in effect")
	}
}

func TestHandlerFilters(t *testing.T) {
	var buf bytes.Buffer
	// The wrapped handler was made for INFO; Wrap starts the root there but bypasses it.
	log := Wrap(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	levels := LevelsOf(log)
	if levels == nil {
		t.Fatal("LevelsOf(Wrap(l)) = nil")
	}
	if lv, _ := levels.Level("root"); lv.Level != "INFO" {
		t.Errorf("root level %s, want the wrapped handler's INFO", lv.Level)
	}
	if lv, ok := levels.Level("wasmconnect.runtime.task"); !ok || lv.Level != "INFO" {
		t.Errorf("components are not registered: %+v %v", lv, ok)
	}
	derived := log.With("worker_id", "w1")
	if LevelsOf(derived) != levels {
		t.Error("a derived logger has other levels")
	}

	log.Debug("hidden")
	levels.Set("wasmconnect.runtime.logging", "DEBUG", time.Now())
	derived.Debug("shown by package")
	log.Debug("hidden by logger attribute", LoggerKey, "other")
	named := log.With(LoggerKey, "plugins.file")
	named.Info("named info")
	levels.Set("plugins", "ERROR", time.Now())
	named.Warn("hidden by namespace")
	named.Error("named error")
	log.WithGroup("g").Debug("grouped", LoggerKey, "other") // a grouped attribute names nothing

	out := buf.String()
	for _, want := range []string{"shown by package", "worker_id=w1", "named info", "named error", "grouped"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, not := range []string{"msg=hidden", "hidden by"} {
		if strings.Contains(out, not) {
			t.Errorf("output has %q:\n%s", not, out)
		}
	}
	if _, ok := levels.Level("other"); !ok {
		t.Error("a logger named by a record attribute does not exist")
	}
	if LevelsOf(slog.Default()) != nil {
		t.Error("LevelsOf a plain logger")
	}
	if Wrap(log) != log {
		t.Error("wrapping twice")
	}
}

func TestWrapOff(t *testing.T) {
	log := Wrap(slog.New(slog.DiscardHandler))
	if lv, _ := LevelsOf(log).Level(connect.RootLogger); lv.Level != "OFF" {
		t.Errorf("root of a handler that takes nothing: %s", lv.Level)
	}
}

// Kafka Connect's logger names, as runbooks and tools send them to /admin/loggers, set the loggers
// of the packages that do that work here.
func TestKafkaLoggerNames(t *testing.T) {
	l := NewLevels("INFO")
	l.Register("wasmconnect.runtime.task", "wasmconnect.runtime.cluster", "wasmconnect.runtime.herder", "wasmconnect.runtime.rest")
	now := time.UnixMilli(1_700_000_000_000)

	names := l.Set("org.apache.kafka.connect.runtime.WorkerSourceTask", "DEBUG", now)
	if !l.Enabled("wasmconnect.runtime.task", slog.LevelDebug) {
		t.Fatalf("WorkerSourceTask=DEBUG left the task loops at INFO (set %v)", names)
	}
	if l.Enabled("wasmconnect.runtime.herder", slog.LevelDebug) {
		t.Fatal("WorkerSourceTask=DEBUG also set the herder")
	}
	if !slices.Contains(names, "org.apache.kafka.connect.runtime.WorkerSourceTask") || !slices.Contains(names, "wasmconnect.runtime.task") {
		t.Fatalf("Set answered %v, want the Kafka name and the task loops", names)
	}
	if lv, ok := l.Level("org.apache.kafka.connect.runtime.WorkerSourceTask"); !ok || lv.Level != "DEBUG" {
		t.Fatalf("GET of the Kafka name: %+v %v", lv, ok)
	}

	// A package name sets everything it stands for; a class under a mapped package maps like it.
	l.Set("org.apache.kafka.connect.runtime.distributed", "TRACE", now)
	for _, n := range []string{"wasmconnect.runtime.herder", "wasmconnect.runtime.cluster"} {
		if !l.Enabled(n, connect.SlogLevel("TRACE")) {
			t.Errorf("runtime.distributed=TRACE left %s above TRACE", n)
		}
	}
	if lv, ok := l.Level("org.apache.kafka.connect.runtime.rest.resources.ConnectorsResource"); !ok || lv.Level != "INFO" {
		t.Fatalf("a class of a mapped package, never set: %+v %v, want the REST loggers' INFO", lv, ok)
	}
	if _, ok := l.Level("org.example.Unknown"); ok {
		t.Fatal("a logger that is neither ours nor Kafka's exists")
	}
}
