package task

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Small in-process transformations: the chain's index bookkeeping is what is tested here; the real
// plugins are tested through the WebAssembly boundary in plugins/transforms.

type dropOdd struct{}

func (dropOdd) Transform(_ context.Context, rs []wire.Record) ([]wire.TransformedRecord, []wire.RecordFailure, error) {
	var out []wire.TransformedRecord
	for i, r := range rs {
		if len(r.Value.Bytes)%2 == 0 {
			out = append(out, wire.TransformedRecord{Input: i, Record: r})
		}
	}
	return out, nil, nil
}

type upper struct{ failOn string }

func (u upper) Transform(_ context.Context, rs []wire.Record) ([]wire.TransformedRecord, []wire.RecordFailure, error) {
	var out []wire.TransformedRecord
	var failed []wire.RecordFailure
	for i, r := range rs {
		if string(r.Value.Bytes) == u.failOn {
			failed = append(failed, wire.RecordFailure{Input: i, Class: "x.DataException", Message: "bad " + u.failOn})
			continue
		}
		r.Value = wire.String(strings.ToUpper(string(r.Value.Bytes)))
		out = append(out, wire.TransformedRecord{Input: i, Record: r})
	}
	return out, failed, nil
}

type topicIs string

func (t topicIs) Test(_ context.Context, rs []wire.Record) ([]bool, []wire.RecordFailure, error) {
	out := make([]bool, len(rs))
	for i, r := range rs {
		out[i] = r.Topic == string(t)
	}
	return out, nil, nil
}

func values(rs []wire.Record) string {
	var s []string
	for _, r := range rs {
		s = append(s, string(r.Value.Bytes))
	}
	return strings.Join(s, ",")
}

func TestChainKeepsOrigins(t *testing.T) {
	in := []wire.Record{
		{Topic: "a", Value: wire.String("xx")}, {Topic: "b", Value: wire.String("y")},
		{Topic: "a", Value: wire.String("zz")}, {Topic: "b", Value: wire.String("ww")},
	}
	chain := Chain{
		{Alias: "drop", Transform: dropOdd{}},                                     // drops "y"
		{Alias: "up", Transform: upper{failOn: "zz"}, Predicate: topicIs("a")},    // topic a only; fails "zz"
		{Alias: "up2", Transform: upper{}, Predicate: topicIs("a"), Negate: true}, // topic b only
	}
	out, origin, failed, err := chain.Apply(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := values(out); got != "XX,WW" {
		t.Fatalf("values %s", got)
	}
	if origin[0] != 0 || origin[1] != 3 {
		t.Fatalf("origins %v, want [0 3]", origin)
	}
	if len(failed) != 1 || failed[0].index != 2 || failed[0].stage != "TRANSFORMATION" || failed[0].class != "x.DataException" {
		t.Fatalf("failures %+v", failed)
	}
}

type guestErr struct{ retry bool }

func (g guestErr) Error() string     { return "rejected" }
func (g guestErr) IsRetriable() bool { return g.retry }

func TestIsolateFindsTheBadRecords(t *testing.T) {
	calls := 0
	out, failed, err := isolate([]int{1, 2, 3, 4}, func(in []int) ([]int, error) {
		calls++
		for _, v := range in {
			if v == 3 {
				return nil, guestErr{}
			}
		}
		out := make([]int, len(in))
		for i, v := range in {
			out[i] = v * 10
		}
		return out, nil
	})
	if err != nil || len(failed) != 1 || failed[2] == nil || out[0] != 10 || out[3] != 40 || calls != 5 {
		t.Fatalf("out %v failed %v err %v calls %d", out, failed, err, calls)
	}
	// An instance failure (not a rejection) is not narrowed down: the task fails.
	_, _, err = isolate([]int{1, 2}, func([]int) ([]int, error) { return nil, errors.New("trap") })
	if err == nil {
		t.Fatal("a trap must fail the call")
	}
}

func TestReportFailuresToleranceNoneNamesStageAndRecord(t *testing.T) {
	p, err := ParseErrorPolicy(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	err = p.reportFailures(context.Background(), nil, "c-0", []failure{{index: 1, stage: "VALUE_CONVERTER", err: errors.New("not JSON")}},
		func(i int) string { return "topic-0@41" }, nil)
	if err == nil || !strings.Contains(err.Error(), "VALUE_CONVERTER") || !strings.Contains(err.Error(), "topic-0@41") {
		t.Fatalf("error %v", err)
	}
	if _, err := ParseErrorPolicy(map[string]string{"errors.tolerance": "some"}); err == nil {
		t.Fatal("errors.tolerance=some accepted")
	}
}

func TestRetryStopsAtTimeout(t *testing.T) {
	p := ErrorPolicy{RetryTimeout: 700 * time.Millisecond, RetryDelayMax: time.Second}
	n := 0
	err := p.retry(context.Background(), func() error { n++; return guestErr{retry: true} })
	if err == nil || n < 2 || n > 3 {
		t.Fatalf("err %v after %d attempts", err, n)
	}
}
