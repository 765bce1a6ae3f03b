package cluster

import (
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// items builds an Allocation from "conn" (a connector) and "conn/3" (a task) strings.
func items(ss ...string) Allocation {
	var a Allocation
	for _, s := range ss {
		if c, n, ok := strings.Cut(s, "/"); ok {
			i, _ := strconv.Atoi(n)
			a.Tasks = append(a.Tasks, connect.TaskID{Connector: c, Task: i})
		} else {
			a.Connectors = append(a.Connectors, s)
		}
	}
	return a.normalized()
}

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// simWorker is a worker in the simulated group.
type simWorker struct {
	id       string
	owned    workSet
	offset   int64
	settings map[string]string
	hasExt   bool
	leaving  bool // a graceful stop's hand-over round
}

// sim drives the pure assignor the way a group drives the Member: one round per rebalance, each
// member applying its revocations and assignments, a second round after revocations, a later
// round after a delay. It checks the cooperative invariants on every round.
type sim struct {
	t             *testing.T
	st            coopState
	gen           int32
	lastCompleted int32
	now           time.Time
	maxDelay      time.Duration
	leader        string
	workers       map[string]*simWorker
	work          Work
	protocol      string
	log           []assignResult
	// lbRevoked records each load-balancing revocation (item → worker it left), to check
	// that revoked work really moves.
	lbRevoked map[string]string
	revokes   int
}

func newSim(t *testing.T, maxDelay time.Duration, work Work) *sim {
	return &sim{t: t, st: newCoopState(), lastCompleted: -1, now: t0, maxDelay: maxDelay,
		workers: map[string]*simWorker{}, work: work, protocol: ProtocolSessioned, lbRevoked: map[string]string{}}
}

func (s *sim) add(id string) *simWorker {
	w := &simWorker{id: id, owned: newWorkSet(), offset: s.work.Offset, hasExt: true}
	s.workers[id] = w
	if s.leader == "" {
		s.leader = id
	}
	return w
}

func (s *sim) remove(id string) workSet {
	w := s.workers[id]
	delete(s.workers, id)
	if s.leader == id {
		s.leader = ""
		for _, id := range slices.Sorted(maps.Keys(s.workers)) {
			s.leader = id
			break
		}
	}
	return w.owned
}

func (s *sim) input() assignInput {
	var members []joinedMember
	for _, id := range slices.Sorted(maps.Keys(s.workers)) {
		w := s.workers[id]
		md := MemberMetadata{Version: 2, URL: "http://" + id + ":8083", ConfigOffset: w.offset,
			Allocation: &MemberAssignment{Version: 2, Assigned: w.owned.alloc()}}
		if w.hasExt {
			md.Ext = &MetadataExtension{Version: "test", Settings: w.settings, Leaving: w.leaving}
		}
		members = append(members, joinedMember{ID: id, Meta: md})
	}
	return assignInput{Group: "connect-cluster", Leader: s.leader, Protocol: s.protocol, Members: members,
		Work: s.work, LastCompletedGeneration: s.lastCompleted, Generation: s.gen + 1, MaxDelay: s.maxDelay, Now: s.now}
}

// round runs one rebalance and applies it.
func (s *sim) round() assignResult {
	s.t.Helper()
	in := s.input()
	s.gen++
	res, st := assign(s.st, in)
	s.st = st
	s.log = append(s.log, res)
	if traceSim {
		fmt.Printf("round gen=%d now=%v work=%v\n", s.gen, s.now.Sub(t0), s.work.Connectors)
		for _, id := range slices.Sorted(maps.Keys(res.Assignments)) {
			a := res.Assignments[id]
			var had Allocation
			if w, ok := s.workers[id]; ok {
				had = w.owned.alloc()
			}
			fmt.Printf("  %s had %v\n     +%v -%v delay %v\n", id, had, a.Assigned, a.Revoked, a.Delay)
		}
	}
	before := map[string]workSet{}
	for id, w := range s.workers {
		before[id] = w.owned.clone()
	}
	for id, w := range s.workers {
		a, ok := res.Assignments[id]
		if !ok {
			s.t.Fatalf("round %d: no assignment for %s", s.gen, id)
		}
		rev := setOf(a.Revoked)
		if !rev.minus(w.owned).empty() {
			s.t.Fatalf("round %d: %s told to revoke %v it does not hold", s.gen, id, rev.minus(w.owned).alloc())
		}
		w.owned.removeSet(rev)
		s.revokes += len(rev.conns) + len(rev.tasks)
		// A load-balancing revocation: the item is still configured and ran only here
		// (deleted and duplicated items are revoked for other reasons).
		lb := rev.intersect(configured(s.work))
		for other, held := range before {
			if other != id {
				lb.removeSet(held)
			}
		}
		for _, c := range lb.alloc().Connectors {
			s.lbRevoked["c:"+c] = id
		}
		for _, tk := range lb.alloc().Tasks {
			s.lbRevoked["t:"+tk.String()] = id
		}
	}
	for id, w := range s.workers {
		a := res.Assignments[id]
		add := setOf(a.Assigned)
		for other, held := range before {
			if other != id && !held.intersect(add).empty() {
				s.t.Fatalf("round %d: %v assigned to %s while %s still runs it", s.gen, held.intersect(add).alloc(), id, other)
			}
		}
		w.owned.addSet(add)
		if a.Error == CodeNone && !reflect.DeepEqual(w.owned.alloc(), res.Owned[id]) {
			s.t.Fatalf("round %d: %s owns %v, leader thinks %v", s.gen, id, w.owned.alloc(), res.Owned[id])
		}
	}
	s.lastCompleted = s.gen
	return res
}

// settle runs rounds until nothing is pending: again at once after a revocation, after the
// delay when one is set. It returns the number of rounds.
func (s *sim) settle() int {
	s.t.Helper()
	for n := 1; n <= 50; n++ {
		res := s.round()
		revoked, delay := false, time.Duration(0)
		for _, a := range res.Assignments {
			revoked = revoked || !a.Revoked.Empty()
			delay = max(delay, a.Delay)
		}
		switch {
		case revoked:
		case delay > 0:
			s.now = s.now.Add(delay)
		default:
			return n
		}
	}
	s.t.Fatal("no convergence in 50 rounds")
	return 0
}

// checkBalanced checks that every configured item runs exactly once and that loads differ by
// at most one, for connectors and for tasks separately.
func (s *sim) checkBalanced() {
	s.t.Helper()
	conf := configured(s.work)
	all := newWorkSet()
	minC, maxC, minT, maxT := 1<<30, -1, 1<<30, -1
	for _, w := range s.workers {
		if !all.intersect(w.owned).empty() {
			s.t.Fatalf("%v runs twice", all.intersect(w.owned).alloc())
		}
		all.addSet(w.owned)
		minC, maxC = min(minC, len(w.owned.conns)), max(maxC, len(w.owned.conns))
		minT, maxT = min(minT, len(w.owned.tasks)), max(maxT, len(w.owned.tasks))
	}
	if len(s.workers) > 0 && !reflect.DeepEqual(all.alloc(), conf.alloc()) {
		s.t.Fatalf("running %v, configured %v", all.alloc(), conf.alloc())
	}
	if maxC-minC > 1 || maxT-minT > 1 {
		s.t.Fatalf("unbalanced: connectors %d..%d tasks %d..%d: %s", minC, maxC, minT, maxT, s)
	}
}

// checkMoved checks that load-balancing revocations moved the work to another worker.
func (s *sim) checkMoved() {
	s.t.Helper()
	for item, from := range s.lbRevoked {
		for id, w := range s.workers {
			kind, name, _ := strings.Cut(item, ":")
			holds := false
			if kind == "c" {
				_, holds = w.owned.conns[name]
			} else {
				for tk := range w.owned.tasks {
					holds = holds || tk.String() == name
				}
			}
			if holds && id == from {
				s.t.Fatalf("%s was revoked from %s and given back to it", name, from)
			}
		}
	}
	s.lbRevoked = map[string]string{}
}

func (s *sim) String() string {
	var b strings.Builder
	for _, id := range slices.Sorted(maps.Keys(s.workers)) {
		fmt.Fprintf(&b, "\n  %s: %v", id, s.workers[id].owned.alloc())
	}
	return b.String()
}

// traceSeed prints every round of one TestCooperativeRandomized seed, for debugging:
//
//	go test ./runtime/cluster -run TestCooperativeRandomized/7 -v -trace-seed=7
var traceSeed = flag.Int("trace-seed", -1, "print the rounds of this TestCooperativeRandomized seed")

var traceSim bool

func work(offset int64, conns map[string]int) Work { return Work{Offset: offset, Connectors: conns} }

func sixByThree() Work {
	return work(10, map[string]int{"c1": 3, "c2": 3, "c3": 3, "c4": 3, "c5": 3, "c6": 3})
}

func TestCooperativeJoinsAndBalance(t *testing.T) {
	s := newSim(t, 2*time.Second, sixByThree())
	s.add("a")
	if n := s.settle(); n != 1 {
		t.Fatalf("first worker: %d rounds", n)
	}
	s.checkBalanced()
	if got := len(s.workers["a"].owned.tasks); got != 18 {
		t.Fatalf("a has %d tasks", got)
	}
	s.add("b")
	res := s.round()
	// Round 1: exactly the excess is revoked from a, nothing assigned to anybody.
	if r := res.Assignments["a"].Revoked; len(r.Connectors) != 3 || len(r.Tasks) != 9 {
		t.Fatalf("a revoked %v", r)
	}
	if !res.Assignments["b"].Assigned.Empty() || res.Assignments["a"].Delay != 0 {
		t.Fatalf("round 1: %+v", res.Assignments)
	}
	res = s.round()
	if a := res.Assignments["b"].Assigned; len(a.Connectors) != 3 || len(a.Tasks) != 9 {
		t.Fatalf("round 2: b got %v", a)
	}
	s.checkBalanced()
	s.checkMoved()
	s.add("c")
	before := s.revokes
	s.settle()
	s.checkBalanced()
	s.checkMoved()
	// c ends with 2 connectors and 6 tasks; exactly those were revoked from a and b.
	if got := s.revokes - before; got != 8 {
		t.Fatalf("%d items revoked for c's 8", got)
	}
}

func TestCooperativeLostWorkHeldThenReassigned(t *testing.T) {
	s := newSim(t, 2*time.Second, sixByThree())
	for _, id := range []string{"a", "b", "c"} {
		s.add(id)
	}
	s.settle()
	s.checkBalanced()
	lost := s.remove("c")

	res := s.round()
	if d := res.Assignments["a"].Delay; d != 2*time.Second {
		t.Fatalf("delay %v, want the max delay", d)
	}
	for _, id := range []string{"a", "b"} {
		if a := res.Assignments[id]; !a.Assigned.Empty() || !a.Revoked.Empty() {
			t.Fatalf("%s changed during the delay: %+v", id, a)
		}
	}
	// A rebalance during the delay (nobody returns) keeps the work unassigned and counts down.
	s.now = s.now.Add(500 * time.Millisecond)
	res = s.round()
	if d := res.Assignments["a"].Delay; d != 1500*time.Millisecond {
		t.Fatalf("remaining delay %v", d)
	}
	if !res.Assignments["b"].Assigned.Empty() {
		t.Fatal("lost work assigned during the delay")
	}
	s.now = s.now.Add(1500 * time.Millisecond)
	res = s.round()
	got := setOf(res.Assignments["a"].Assigned)
	got.addSet(setOf(res.Assignments["b"].Assigned))
	if !reflect.DeepEqual(got.alloc(), lost.alloc()) {
		t.Fatalf("reassigned %v, lost %v", got.alloc(), lost.alloc())
	}
	if res.Assignments["a"].Delay != 0 {
		t.Fatal("delay not reset")
	}
	s.checkBalanced()
}

func TestCooperativeReturningWorker(t *testing.T) {
	t.Run("still running its work: keeps it, delay cancelled", func(t *testing.T) {
		s := newSim(t, 2*time.Second, sixByThree())
		for _, id := range []string{"a", "b", "c"} {
			s.add(id)
		}
		s.settle()
		c := s.workers["c"]
		s.remove("c")
		if d := s.round().Assignments["a"].Delay; d == 0 {
			t.Fatal("no delay")
		}
		s.now = s.now.Add(time.Second)
		s.workers["c2"] = &simWorker{id: "c2", owned: c.owned, offset: 10, hasExt: true} // new member id, same work
		res := s.round()
		for id, a := range res.Assignments {
			if !a.Assigned.Empty() || !a.Revoked.Empty() || a.Delay != 0 {
				t.Fatalf("%s: %+v", id, a)
			}
		}
		s.checkBalanced()
	})
	t.Run("restarted empty: gets the lost work when the delay ends", func(t *testing.T) {
		s := newSim(t, 2*time.Second, sixByThree())
		for _, id := range []string{"a", "b", "c"} {
			s.add(id)
		}
		s.settle()
		lost := s.remove("c")
		s.round()
		s.now = s.now.Add(time.Second)
		s.add("c2")
		res := s.round() // c2 is a candidate; the delay keeps running
		if !res.Assignments["c2"].Assigned.Empty() || res.Assignments["c2"].Delay != time.Second {
			t.Fatalf("c2 during the delay: %+v", res.Assignments["c2"])
		}
		s.now = s.now.Add(time.Second)
		res = s.round()
		if got := res.Assignments["c2"].Assigned; !reflect.DeepEqual(got, lost.alloc()) {
			t.Fatalf("c2 got %v, lost was %v", got, lost.alloc())
		}
		s.settle()
		s.checkBalanced()
	})
}

func TestCooperativeImmediateReassignment(t *testing.T) {
	t.Run("max delay 0", func(t *testing.T) {
		s := newSim(t, 0, sixByThree())
		for _, id := range []string{"a", "b", "c"} {
			s.add(id)
		}
		s.settle()
		s.remove("b")
		res := s.round()
		if res.Assignments["a"].Delay != 0 || res.Assignments["a"].Assigned.Empty() {
			t.Fatalf("%+v", res.Assignments["a"])
		}
		s.checkBalanced()
	})
	t.Run("missed SyncGroup: nobody left", func(t *testing.T) {
		s := newSim(t, time.Minute, sixByThree())
		for _, id := range []string{"a", "b"} {
			s.add(id)
		}
		s.settle()
		b := s.workers["b"]
		missed := b.owned
		b.owned = newWorkSet() // b lost its assignment (never received it) but is still a member
		res := s.round()
		if res.Assignments["a"].Delay != 0 {
			t.Fatal("delayed although nobody left")
		}
		got := setOf(res.Assignments["a"].Assigned)
		got.addSet(setOf(res.Assignments["b"].Assigned))
		if !reflect.DeepEqual(got.alloc(), missed.alloc()) {
			t.Fatalf("reassigned %v, want %v", got.alloc(), missed.alloc())
		}
	})
	// A worker stops gracefully and hands its work over, and a member misses the SyncGroup of that
	// hand-over round (the leaver's LeaveGroup started the next rebalance at once): what that member
	// was given but never received is not lost with the leaver, it is reassigned at once.
	t.Run("missed SyncGroup of a hand-over", func(t *testing.T) {
		s := newSim(t, time.Minute, sixByThree())
		for _, id := range []string{"a", "b", "c"} {
			s.add(id)
		}
		s.settle()
		c := s.workers["c"]
		c.owned, c.leaving = newWorkSet(), true // it stopped its work before the hand-over round
		a := s.workers["a"]
		before := a.owned.clone()
		handOver := s.round()
		undelivered := setOf(handOver.Assignments["a"].Assigned)
		if undelivered.empty() {
			t.Fatalf("a got none of c's work in the hand-over: %+v", handOver.Assignments["a"])
		}
		a.owned = before // a never received it
		s.remove("c")
		res := s.round()
		if res.Assignments["a"].Delay != 0 || res.Assignments["b"].Delay != 0 {
			t.Fatalf("work a never received waits for the scheduled delay: %+v", res.Assignments)
		}
		got := setOf(res.Assignments["a"].Assigned)
		got.addSet(setOf(res.Assignments["b"].Assigned))
		if !reflect.DeepEqual(got.alloc(), undelivered.alloc()) {
			t.Fatalf("reassigned %v, want %v", got.alloc(), undelivered.alloc())
		}
		s.settle()
		s.checkBalanced()
	})
	t.Run("new leader has no previous assignment", func(t *testing.T) {
		s := newSim(t, time.Minute, sixByThree())
		for _, id := range []string{"a", "b", "c"} {
			s.add(id)
		}
		s.settle()
		s.remove("a") // the leader
		s.st = newCoopState()
		res := s.round()
		if res.Assignments["b"].Delay != 0 {
			t.Fatal("a new leader cannot know the work was lost, Kafka reassigns at once")
		}
		s.settle()
		s.checkBalanced()
	})
}

func TestCooperativeConfigChanges(t *testing.T) {
	s := newSim(t, time.Minute, work(5, map[string]int{"x": 2, "y": 2}))
	s.add("a")
	s.add("b")
	s.settle()
	holder := ""
	for id, w := range s.workers {
		if _, ok := w.owned.conns["x"]; ok {
			holder = id
		}
	}
	t.Run("deleted connector revoked", func(t *testing.T) {
		s.work = work(6, map[string]int{"y": 2})
		res := s.round()
		if r := res.Assignments[holder].Revoked; !slices.Contains(r.Connectors, "x") {
			t.Fatalf("x not revoked from %s: %v", holder, r)
		}
		s.settle()
		s.checkBalanced()
	})
	t.Run("stopped connector keeps its connector, loses its tasks", func(t *testing.T) {
		s.work = Work{Offset: 7, Connectors: map[string]int{"y": 2}, Stopped: map[string]bool{"y": true}}
		s.settle()
		s.checkBalanced()
		all := newWorkSet()
		for _, w := range s.workers {
			all.addSet(w.owned)
		}
		if !reflect.DeepEqual(all.alloc(), items("y")) {
			t.Fatalf("running %v", all.alloc())
		}
	})
	t.Run("more tasks", func(t *testing.T) {
		s.work = work(8, map[string]int{"y": 5, "z": 1})
		s.settle()
		s.checkBalanced()
	})
}

func TestCooperativeDuplicatesRevokedFromAllHolders(t *testing.T) {
	s := newSim(t, time.Minute, work(1, map[string]int{"x": 2}))
	s.add("a")
	s.add("b")
	s.settle()
	// A zombie: b also runs a's task (KAFKA-9841).
	var dup connect.TaskID
	for tk := range s.workers["a"].owned.tasks {
		dup = tk
	}
	s.workers["b"].owned.tasks[dup] = struct{}{}
	res := s.round()
	for _, id := range []string{"a", "b"} {
		if !slices.Contains(res.Assignments[id].Revoked.Tasks, dup) {
			t.Fatalf("%v not revoked from %s: %+v", dup, id, res.Assignments[id])
		}
	}
	s.settle()
	s.checkBalanced()
}

func TestCooperativeRevocationBackoff(t *testing.T) {
	if got := []time.Duration{revocationBackoff(1, 5*time.Minute), revocationBackoff(2, 5*time.Minute),
		revocationBackoff(3, 5*time.Minute), revocationBackoff(4, 5*time.Minute), revocationBackoff(1, 0)}; !reflect.DeepEqual(got,
		[]time.Duration{40 * time.Millisecond, 1600 * time.Millisecond, 64 * time.Second, 5 * time.Minute, 0}) {
		t.Fatalf("backoff %v", got)
	}
	s := newSim(t, time.Minute, sixByThree())
	s.add("a")
	s.settle()
	s.add("b")
	if r := s.round(); r.Assignments["a"].Revoked.Empty() {
		t.Fatal("no revocation for b")
	}
	// Before the second round, c joins: balancing would revoke again in consecutive rounds.
	s.add("c")
	res := s.round()
	if d := res.Assignments["a"].Delay; d != 40*time.Millisecond {
		t.Fatalf("delay %v, want 40ms", d)
	}
	for id, a := range res.Assignments {
		if !a.Revoked.Empty() {
			t.Fatalf("%s revoked during the backoff: %v", id, a.Revoked)
		}
	}
	s.settle()
	s.checkBalanced()
}

func TestConfigMismatch(t *testing.T) {
	members := func() []joinedMember {
		return []joinedMember{
			{ID: "a", Meta: MemberMetadata{Version: 2, URL: "http://a:8083", ConfigOffset: 10}},
			{ID: "b", Meta: MemberMetadata{Version: 2, URL: "http://b:8083", ConfigOffset: 12}},
		}
	}
	in := assignInput{Group: "g", Leader: "a", Protocol: ProtocolSessioned, Members: members(),
		Work: work(10, map[string]int{"x": 1}), Generation: 1, LastCompletedGeneration: -1, Now: t0}
	t.Run("refresh catches up", func(t *testing.T) {
		calls := 0
		in := in
		in.Refresh = func() (Work, error) { calls++; return work(12, map[string]int{"x": 1}), nil }
		res, _ := assign(newCoopState(), in)
		if calls != 1 || res.Offset != 12 || res.Assignments["a"].Error != CodeNone || res.Assignments["a"].ConfigOffset != 12 {
			t.Fatalf("calls %d res %+v", calls, res)
		}
	})
	t.Run("still behind", func(t *testing.T) {
		calls := 0
		in := in
		in.Refresh = func() (Work, error) { calls++; return work(11, map[string]int{"x": 1}), nil }
		st := newCoopState()
		res, next := assign(st, in)
		if calls != 1 {
			t.Fatalf("refreshed %d times", calls)
		}
		for id, a := range res.Assignments {
			want := MemberAssignment{Version: 2, Error: CodeConfigMismatch, Leader: "a", LeaderURL: "http://a:8083", ConfigOffset: 12}
			if !reflect.DeepEqual(a, want) {
				t.Fatalf("%s: %+v", id, a)
			}
		}
		if !reflect.DeepEqual(next, st) {
			t.Fatal("state changed by a failed assignment")
		}
	})
}

const (
	jsonConv   = "org.apache.kafka.connect.json.JsonConverter"
	stringConv = "org.apache.kafka.connect.storage.StringConverter"
)

func TestSettingsMismatch(t *testing.T) {
	s := newSim(t, time.Minute, work(3, map[string]int{"x": 3}))
	good := map[string]string{"value.converter": jsonConv, "config.storage.topic": "cfg"}
	s.add("a").settings = good
	s.add("b").settings = map[string]string{"value.converter": jsonConv, "config.storage.topic": "cfg", "header.converter": "h"}
	s.add("java").hasExt = false
	s.settle()
	s.checkBalanced()

	bad := s.add("z")
	bad.settings = map[string]string{"value.converter": stringConv, "config.storage.topic": "other", "key.converter": "k"}
	bad.owned = setOf(items("x/0")) // as if a previous leader had given it work: duplicates x/0
	res := s.round()
	want := "config.storage.topic is other on this worker but cfg in group connect-cluster (leader http://a:8083); " +
		"value.converter is " + stringConv + " on this worker but " + jsonConv + " in group connect-cluster (leader http://a:8083)"
	z := res.Assignments["z"]
	if z.Message != want || z.Error != CodeConfigMismatch || !z.Assigned.Empty() || !reflect.DeepEqual(z.Revoked, items("x/0")) {
		t.Fatalf("z: %+v\nwant message %q", z, want)
	}
	for _, id := range []string{"a", "b", "java"} {
		if res.Assignments[id].Error != CodeNone {
			t.Fatalf("%s: %+v", id, res.Assignments[id])
		}
	}
	delete(s.workers, "z")
	s.settle()
	s.checkBalanced()

	t.Run("leader in the minority stands down", func(t *testing.T) {
		in := s.input()
		for i := range in.Members {
			if in.Members[i].ID == "b" {
				in.Members[i].Meta.Ext = &MetadataExtension{Settings: map[string]string{"value.converter": stringConv}}
			}
		}
		in.Members = append(in.Members, joinedMember{ID: "c", Meta: MemberMetadata{Version: 2, URL: "http://c:8083",
			ConfigOffset: 3, Ext: &MetadataExtension{Settings: map[string]string{"value.converter": stringConv}}}})
		res, _ := assign(s.st, in)
		wantLeader := "value.converter is " + jsonConv + " on this worker but " + stringConv + " on worker http://b:8083; " +
			"2 of the 3 workers in group connect-cluster have other settings, so this worker stands down as leader and leaves the group"
		if got := res.Assignments["a"].Message; got != wantLeader {
			t.Fatalf("leader message\n got %q\nwant %q", got, wantLeader)
		}
		for _, id := range []string{"b", "c", "java"} {
			if a := res.Assignments[id]; a.Error != CodeConfigMismatch || a.Message != "" {
				t.Fatalf("%s: %+v", id, a)
			}
		}
	})
}

func TestEagerAssignor(t *testing.T) {
	in := assignInput{Group: "g", Leader: "b", Protocol: ProtocolDefault, Generation: 4, Now: t0,
		Work: work(7, map[string]int{"x": 2, "y": 1})}
	for _, id := range []string{"b", "c", "a"} {
		in.Members = append(in.Members, joinedMember{ID: id, Meta: MemberMetadata{URL: "http://" + id, ConfigOffset: 7}})
	}
	res, _ := assign(newCoopState(), in)
	want := map[string]Allocation{"a": items("x", "x/1"), "b": items("y", "y/0"), "c": items("x/0")}
	for id, w := range want {
		a := res.Assignments[id]
		if !reflect.DeepEqual(a.Assigned, w) || a.Version != 0 || a.Leader != "b" || a.LeaderURL != "http://b" || a.ConfigOffset != 7 {
			t.Fatalf("%s: %+v, want %v", id, a, w)
		}
	}
}

func TestGenerationMismatchForgetsPrevious(t *testing.T) {
	s := newSim(t, time.Minute, sixByThree())
	s.add("a")
	s.add("b")
	s.settle()
	s.remove("b")
	s.lastCompleted = 99 // the SyncGroup of the leader's last computation failed
	res := s.round()
	if res.Assignments["a"].Delay != 0 || len(res.Assignments["a"].Assigned.Tasks) != 9 {
		t.Fatalf("%+v", res.Assignments["a"])
	}
}

func TestAssignDeterministic(t *testing.T) {
	s := newSim(t, time.Minute, sixByThree())
	for _, id := range []string{"w1", "w2", "w3", "w4"} {
		s.add(id)
	}
	s.settle()
	s.remove("w2")
	s.add("w5")
	in := s.input()
	want, wantSt := assign(s.st, in)
	for range 20 {
		in := in
		in.Members = slices.Clone(in.Members)
		rand.Shuffle(len(in.Members), func(i, j int) { in.Members[i], in.Members[j] = in.Members[j], in.Members[i] })
		got, gotSt := assign(s.st, in)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotSt, wantSt) {
			t.Fatal("assignment depends on member order")
		}
	}
}

// TestCooperativeRandomized runs random joins, departures, returns and config changes, and
// checks after every round that no work is assigned twice, and after convergence that all work
// runs once, balanced within one, and that revoked work moved. Runs twice per seed to check
// determinism.
func TestCooperativeRandomized(t *testing.T) {
	for seed := range uint64(60) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomized(t, seed) })
	}
}

func randomized(t *testing.T, seed uint64) {
	traceSim = int(seed) == *traceSeed
	var first []assignResult
	for pass := range 2 {
		rng := rand.New(rand.NewPCG(seed, 1))
		s := newSim(t, time.Duration(rng.IntN(3))*time.Second, Work{Offset: 1, Connectors: map[string]int{}})
		next := 0
		newID := func() string { next++; return fmt.Sprintf("w%02d", next) }
		s.add(newID())
		for range 30 {
			switch ev := rng.IntN(10); {
			case ev < 3:
				s.add(newID())
			case ev < 5 && len(s.workers) > 1:
				ids := slices.Sorted(maps.Keys(s.workers))
				gone := ids[rng.IntN(len(ids))]
				owned := s.remove(gone)
				if rng.IntN(2) == 0 { // comes back soon, maybe still running its work
					s.round()
					s.now = s.now.Add(time.Duration(rng.IntN(1500)) * time.Millisecond)
					w := s.add(newID())
					if rng.IntN(2) == 0 {
						w.owned = owned
					}
				}
			case ev < 8:
				s.work.Offset++
				conns := maps.Clone(s.work.Connectors)
				conns[fmt.Sprintf("c%d", rng.IntN(12))] = rng.IntN(6)
				s.work.Connectors = conns
			default:
				s.work.Offset++
				conns := maps.Clone(s.work.Connectors)
				if names := slices.Sorted(maps.Keys(conns)); len(names) > 0 {
					delete(conns, names[rng.IntN(len(names))])
				}
				s.work.Connectors = conns
			}
			for _, w := range s.workers {
				w.offset = s.work.Offset
			}
			s.settle()
			s.checkBalanced()
			s.checkMoved()
		}
		if pass == 0 {
			first = s.log
		} else if !reflect.DeepEqual(first, s.log) {
			t.Fatalf("seed %d: not deterministic", seed)
		}
	}
}
