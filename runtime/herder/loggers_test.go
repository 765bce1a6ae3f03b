package herder

import (
	"slices"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/logging"
)

func TestWorkerScopeLoggers(t *testing.T) {
	e := newEnv(t)
	all, err := e.h.Loggers(e.ctx)
	if err != nil || len(all) != 1 || all["root"].Level != "INFO" || all["root"].LastModified != nil {
		t.Fatalf("initial loggers %+v %v", all, err)
	}
	before := time.Now().UnixMilli()
	changed, err := e.h.SetLogLevel(e.ctx, "wasmconnect.runtime.t", "DEBUG", connect.ScopeWorker)
	// The namespace's logger is created; existing loggers whose names start with it are set.
	if err != nil || !slices.Equal(changed, []string{"wasmconnect.runtime.t", "wasmconnect.runtime.task"}) {
		t.Errorf("set: %q %v", changed, err)
	}
	lv, found, err := e.h.Logger(e.ctx, "wasmconnect.runtime.task")
	if err != nil || !found || lv.Level != "DEBUG" || lv.LastModified == nil || *lv.LastModified < before {
		t.Errorf("task logger %+v %v %v", lv, found, err)
	}
	// The level is in effect for the records of that package.
	if !logging.LevelsOf(e.h.cfg.Logger).Enabled("wasmconnect.runtime.task", -4) {
		t.Error("DEBUG is not enabled for wasmconnect.runtime.task")
	}
	// A logger without a level of its own shows the root's.
	if lv, found, _ := e.h.Logger(e.ctx, "wasmconnect.wasmhost"); !found || lv.Level != "INFO" || lv.LastModified != nil {
		t.Errorf("wasmhost logger %+v %v", lv, found)
	}
	if _, found, _ := e.h.Logger(e.ctx, "org.example.Nothing"); found {
		t.Error("a logger that does not exist was found")
	}
	// Kafka Connect's name for the task loops answers with theirs.
	if lv, found, _ := e.h.Logger(e.ctx, "org.apache.kafka.connect.runtime.WorkerSourceTask"); !found || lv.Level != "DEBUG" {
		t.Errorf("Kafka's task logger %+v %v", lv, found)
	}
	if lv, found, _ := e.h.Logger(e.ctx, "ROOT"); !found || lv.Level != "INFO" {
		t.Errorf("root %+v %v", lv, found)
	}
	if all, _ := e.h.Loggers(e.ctx); len(all) != 3 {
		t.Errorf("loggers %+v", all)
	}
}

// A cluster-scope level goes to the config topic; every worker applies it when its loop reads
// the record, and a worker that starts later applies it at startup.
func TestClusterScopeLoggers(t *testing.T) {
	e := newEnv(t)
	e.h.followClusterLoggerLevels()
	changed, err := e.h.SetLogLevel(e.ctx, "wasmconnect.wasmhost", "ERROR", connect.ScopeCluster)
	if err != nil || changed != nil {
		t.Fatalf("set: %q %v", changed, err)
	}
	if got := e.configs.Snapshot().LoggerLevels; got["wasmconnect.wasmhost"] != "ERROR" {
		t.Fatalf("config topic levels %v", got)
	}
	// Nothing changes until the loop reads the record.
	if lv, _, _ := e.h.Logger(e.ctx, "wasmconnect.wasmhost"); lv.Level != "INFO" {
		t.Errorf("applied before it was read: %+v", lv)
	}
	e.h.handleChanges(e.ctx)
	if lv, _, _ := e.h.Logger(e.ctx, "wasmconnect.wasmhost"); lv.Level != "ERROR" || lv.LastModified == nil {
		t.Errorf("after the loop read it: %+v", lv)
	}

	// Written in this order, the more specific level must win at another worker's startup too,
	// whatever order the snapshot gives them in.
	for _, l := range [][2]string{{"wasmconnect.runtime.task", "TRACE"}, {"wasmconnect.runtime", "WARN"}, {"root", "ERROR"}} {
		if _, err := e.h.SetLogLevel(e.ctx, l[0], l[1], connect.ScopeCluster); err != nil {
			t.Fatal(err)
		}
	}
	later := e.herder()
	later.followClusterLoggerLevels()
	for name, want := range map[string]string{
		"root": "ERROR", "wasmconnect.wasmhost": "ERROR", "wasmconnect.runtime.task": "TRACE", "wasmconnect.runtime.store": "WARN",
	} {
		if lv, _, _ := later.Logger(e.ctx, name); lv.Level != want {
			t.Errorf("started worker: %s is %s, want %s", name, lv.Level, want)
		}
	}
	// The first worker applies the three records in the order they were written: the root last.
	e.h.handleChanges(e.ctx)
	if lv, _, _ := e.h.Logger(e.ctx, "wasmconnect.runtime.task"); lv.Level != "ERROR" {
		t.Errorf("running worker: task logger %+v", lv)
	}

	// Any other change is not the hook's business.
	e.h.applyClusterLoggerLevel("x", "LOUD")
	if _, found, _ := e.h.Logger(e.ctx, "x"); found {
		t.Error("an invalid level was applied")
	}
}
