package cluster

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Work is the leader's view of the config topic: the connectors that must run and their tasks.
type Work struct {
	// Offset is the config topic position the view reflects: last offset read + 1, -1 if none.
	Offset int64
	// Connectors maps each configured connector to its number of committed task configs.
	Connectors map[string]int
	// Stopped holds the connectors whose target state is STOPPED. Such a connector stays
	// assigned to a worker (which keeps it stopped, as Java does) but none of its tasks is.
	Stopped map[string]bool
}

// joinedMember is one member of a JoinGroup response, as the leader sees it.
type joinedMember struct {
	ID   string
	Meta MemberMetadata
	Err  error // the metadata could not be decoded; the member gets no work
}

// assignInput is everything an assignment depends on. Together with coopState it determines the
// result completely: the assignor reads no clock and no other state.
type assignInput struct {
	Group    string // group.id, for messages
	Leader   string // the leader's member id
	Protocol string // the sub-protocol the coordinator chose
	Members  []joinedMember
	Work     Work
	// Refresh, if set, is called once when Work is behind a member's config offset: the leader
	// reads the config topic to the end again (Java's configFreshSnapshot).
	Refresh func() (Work, error)
	// LastCompletedGeneration is the generation of the leader's last successful SyncGroup (-1
	// none); Generation is the one being assigned.
	LastCompletedGeneration int32
	Generation              int32
	MaxDelay                time.Duration // scheduled.rebalance.max.delay.ms
	Now                     time.Time
}

// assignResult is the leader's answer for every member.
type assignResult struct {
	Assignments map[string]MemberAssignment // by member id, ready to encode
	Owned       map[string]Allocation       // each member's full assignment after this round
	Offset      int64                       // config offset the assignment was made at
	RefreshErr  error                       // Refresh failed (the result is a CONFIG_MISMATCH)
}

// coopState is what the incremental cooperative assignor keeps between rounds (the fields of
// Java's IncrementalCooperativeAssignor). The zero value is not ready; use newCoopState.
type coopState struct {
	previous workSet // previousAssignment
	// previousOwners is what each member was given in the previous round: work a member that is
	// still here does not report was never delivered to it (it missed that SyncGroup), not lost.
	previousOwners     map[string]workSet
	previousRevocation workSet
	revokedInPrevious  bool
	candidates         []string // candidateWorkersForReassignment, in insertion order
	scheduled          time.Time
	delay              time.Duration
	previousGeneration int32
	previousMembers    []string
	successiveRevoking int // numSuccessiveRevokingRebalances
}

func newCoopState() coopState {
	return coopState{previous: newWorkSet(), previousRevocation: newWorkSet(), previousGeneration: -1}
}

func (s coopState) clone() coopState {
	c := s
	c.previous = s.previous.clone()
	if s.previousOwners != nil {
		c.previousOwners = make(map[string]workSet, len(s.previousOwners))
		for id, w := range s.previousOwners {
			c.previousOwners[id] = w.clone()
		}
	}
	c.previousRevocation = s.previousRevocation.clone()
	c.candidates = slices.Clone(s.candidates)
	c.previousMembers = slices.Clone(s.previousMembers)
	return c
}

// assign computes the assignment of one rebalance. It is a pure function: st is not modified,
// and the state for the next round is returned. For the "default" protocol it runs the eager
// assignor, for the others the incremental cooperative one.
//
// Before either, it splits off the members whose wasmconnect settings differ from the leader's
// (they get an error and no work; see Config.Settings) and checks the leader's config offset
// (CONFIG_MISMATCH to everyone if the leader stays behind after one refresh).
func assign(st coopState, in assignInput) (assignResult, coopState) {
	st = st.clone()
	version, ok := ProtocolVersion(in.Protocol)
	if !ok {
		version = 1
	}
	res := assignResult{Assignments: map[string]MemberAssignment{}, Owned: map[string]Allocation{}}
	base := MemberAssignment{Version: version, Leader: in.Leader}
	for _, m := range in.Members {
		if m.ID == in.Leader {
			base.LeaderURL = m.Meta.URL
		}
	}

	compatible, refused, yield := checkSettings(in, base.LeaderURL)
	var maxOffset int64 = -1
	for _, m := range compatible {
		maxOffset = max(maxOffset, m.Meta.ConfigOffset)
	}
	fail := func(msgs map[string]string) (assignResult, coopState) {
		res.Offset = maxOffset
		for _, m := range in.Members {
			a := base
			a.Error, a.ConfigOffset, a.Message = CodeConfigMismatch, maxOffset, msgs[m.ID]
			res.Assignments[m.ID] = a
			res.Owned[m.ID] = Allocation{}
		}
		return res, st
	}
	if yield {
		// The leader is the odd one out: it refuses itself, and tells the others to rejoin
		// (a plain CONFIG_MISMATCH, which Java workers understand too) once it has left.
		return fail(map[string]string{in.Leader: refused[in.Leader]})
	}

	work := in.Work
	if work.Offset < maxOffset && in.Refresh != nil {
		w, err := in.Refresh()
		if err != nil {
			res.RefreshErr = err
		} else {
			work = w
		}
	}
	if work.Offset < maxOffset {
		return fail(refused)
	}
	res.Offset = max(maxOffset, work.Offset)
	base.ConfigOffset = res.Offset

	var next map[string]MemberAssignment
	if version == 0 {
		next = assignEager(compatible, work, base, res.Owned)
	} else {
		next = st.assignCooperative(in, compatible, work, base, res.Owned)
	}
	maps.Copy(res.Assignments, next)
	for _, m := range in.Members {
		msg, ok := refused[m.ID]
		if !ok {
			continue
		}
		a := base
		a.Error, a.Message = CodeConfigMismatch, msg
		if version >= 1 && m.Meta.Allocation != nil {
			a.Revoked = m.Meta.Allocation.Assigned.normalized()
		}
		res.Assignments[m.ID] = a
		res.Owned[m.ID] = Allocation{}
	}
	return res, st
}

// checkSettings splits the members into those that may get work and those refused, with the
// message for each refused one. A member is refused when its metadata cannot be decoded, or
// when a setting that both it and the leader report has another value (members without the
// extension, i.e. Java workers, always pass). If more members disagree with the leader than
// agree with it, the leader is the one misconfigured: yield is true and refused[leader] says so.
func checkSettings(in assignInput, leaderURL string) (compatible []joinedMember, refused map[string]string, yield bool) {
	refused = map[string]string{}
	var leader *MetadataExtension
	for _, m := range in.Members {
		if m.ID == in.Leader && m.Err == nil {
			leader = m.Meta.Ext
		}
	}
	where := fmt.Sprintf("in group %s (leader %s)", in.Group, leaderURL)
	agree, disagree := 1, 0
	var firstOther *joinedMember
	for i, m := range in.Members {
		switch {
		case m.Err != nil:
			refused[m.ID] = fmt.Sprintf("the leader of group %s could not decode this worker's group metadata: %v", in.Group, m.Err)
			continue
		case m.ID == in.Leader || leader == nil || m.Meta.Ext == nil:
		default:
			if diffs := DiffSettings(m.Meta.Ext.Settings, leader.Settings); len(diffs) > 0 {
				refused[m.ID] = describeDiffs(diffs, where)
				disagree++
				if firstOther == nil {
					firstOther = &in.Members[i]
				}
				continue
			}
			agree++
		}
		compatible = append(compatible, m)
	}
	if disagree > agree {
		diffs := DiffSettings(leader.Settings, firstOther.Meta.Ext.Settings)
		refused[in.Leader] = fmt.Sprintf("%s; %d of the %d workers in group %s have other settings, so this worker stands down as leader and leaves the group",
			describeDiffs(diffs, "on worker "+firstOther.Meta.URL), disagree, agree+disagree, in.Group)
		return nil, refused, true
	}
	return compatible, refused, false
}

// configured returns the connectors and tasks of w.
func configured(w Work) workSet {
	s := newWorkSet()
	for c, n := range w.Connectors {
		s.conns[c] = struct{}{}
		if w.Stopped[c] {
			continue
		}
		for i := range n {
			s.tasks[connect.TaskID{Connector: c, Task: i}] = struct{}{}
		}
	}
	return s
}

// assignEager is Java's EagerAssignor: connectors round-robin over the members sorted by id,
// then all tasks (sorted) continuing the same circular iterator. Every member gets its full
// assignment (v0).
func assignEager(members []joinedMember, w Work, base MemberAssignment, owned map[string]Allocation) map[string]MemberAssignment {
	ids := memberIDs(members)
	out := make(map[string]MemberAssignment, len(ids))
	if len(ids) == 0 {
		return out
	}
	full := make(map[string]*Allocation, len(ids))
	for _, id := range ids {
		full[id] = &Allocation{}
	}
	all := configured(w).alloc()
	i := 0
	for _, c := range all.Connectors {
		a := full[ids[i%len(ids)]]
		a.Connectors = append(a.Connectors, c)
		i++
	}
	for _, t := range all.Tasks {
		a := full[ids[i%len(ids)]]
		a.Tasks = append(a.Tasks, t)
		i++
	}
	for _, id := range ids {
		a := base
		a.Assigned = *full[id]
		out[id] = a
		owned[id] = *full[id]
	}
	return out
}

// assignCooperative is Java's IncrementalCooperativeAssignor.performTaskAssignment (KIP-415,
// with KAFKA-9848, KAFKA-10413, KAFKA-12495, KAFKA-15693 and KAFKA-9841), on the state in s.
//
// Two deliberate differences: deleted is computed from previous ∪ active instead of previous
// alone, so a connector deleted while the leadership moved is revoked in the first round of
// the new leader rather than the second; and work given last round to a member that is still
// in the group but does not report it (it missed that SyncGroup) is reassigned at once, even
// when another member left, instead of waiting for the scheduled delay.
func (s *coopState) assignCooperative(in assignInput, members []joinedMember, w Work, base MemberAssignment, owned map[string]Allocation) map[string]MemberAssignment {
	ids := memberIDs(members)
	if s.previousGeneration != in.LastCompletedGeneration {
		// The last assignment this leader computed was not the last completed one (a failed
		// SyncGroup, or a new leader): forget it.
		s.previous = newWorkSet()
		s.previousOwners = nil
	}
	conf := configured(w)

	current := make(map[string]workSet, len(members))
	for _, m := range members {
		cur := newWorkSet()
		if m.Meta.Version >= 1 && m.Meta.Allocation != nil {
			cur = setOf(m.Meta.Allocation.Assigned)
		}
		current[m.ID] = cur
	}
	active := newWorkSet()
	duplicated := newWorkSet()
	for _, id := range ids {
		duplicated.addSet(active.intersect(current[id]))
		active.addSet(current[id])
	}

	// A revocation of the last round that did not take effect: start over from what runs.
	if !s.previousRevocation.empty() {
		if !active.intersect(s.previousRevocation).empty() {
			s.previous = active.clone()
			s.previousOwners = nil
		}
		s.previousRevocation = newWorkSet()
	}

	prevOrActive := s.previous.clone()
	prevOrActive.addSet(active)
	deleted := prevOrActive.minus(conf)
	lost := s.previous.minus(active).minus(deleted)
	// Work given last round to a member that is still here but does not report it: that member
	// missed the SyncGroup (typically of a hand-over, whose LeaveGroup starts the next rebalance at
	// once), so nobody runs it and nobody will come back for it. Unlike Java, which holds it for
	// scheduled.rebalance.max.delay.ms when any member left, it is reassigned now.
	undelivered := newWorkSet()
	for _, id := range ids {
		undelivered.addSet(lost.intersect(s.previousOwners[id]))
	}
	lost = lost.minus(undelivered)
	created := conf.minus(s.previous).minus(active)

	toRevoke := make(map[string]workSet, len(ids))
	next := make(map[string]workSet, len(ids))
	drop := deleted.clone()
	drop.addSet(duplicated)
	for _, id := range ids {
		toRevoke[id] = current[id].intersect(drop)
		next[id] = current[id].minus(drop)
	}

	// Workers that are leaving gracefully take part in this round only to hand their work over:
	// they get nothing, and what they held is reassigned at once (handleLost sees no member gone).
	targets := staying(members)
	reassign := s.handleLost(lost, next, ids, targets, in.MaxDelay, in.Now)
	reassign.addSet(undelivered)

	if s.delay == 0 {
		lb := loadBalancingRevocations(conf, next, targets)
		switch {
		case s.revokedInPrevious && len(lb) > 0:
			s.successiveRevoking++
			s.delay = revocationBackoff(s.successiveRevoking, in.MaxDelay)
			if s.delay != 0 {
				s.scheduled = in.Now.Add(s.delay)
			} else {
				applyRevocations(lb, toRevoke, next)
			}
		case len(lb) > 0:
			applyRevocations(lb, toRevoke, next)
			s.revokedInPrevious = true
		case s.revokedInPrevious:
			s.revokedInPrevious = false
			s.successiveRevoking = 0
		}
	} else {
		s.revokedInPrevious = false
	}

	reassign.addSet(created)
	assignLeastLoaded(reassign, next, targets)

	out := make(map[string]MemberAssignment, len(ids))
	nextPrevious := newWorkSet()
	revokedAll := newWorkSet()
	s.previousOwners = make(map[string]workSet, len(ids))
	for _, id := range ids {
		a := base
		a.Assigned = next[id].minus(current[id]).alloc()
		a.Revoked = toRevoke[id].alloc()
		a.Delay = s.delay
		out[id] = a
		owned[id] = next[id].alloc()
		s.previousOwners[id] = next[id].minus(toRevoke[id])
		nextPrevious.addSet(next[id])
		revokedAll.addSet(toRevoke[id])
	}
	nextPrevious = nextPrevious.minus(revokedAll)
	nextPrevious.addSet(lost)
	s.previous = nextPrevious
	s.previousRevocation = revokedAll
	s.previousGeneration = in.Generation
	s.previousMembers = ids
	return out
}

// handleLost decides what happens to the lost work (Java's handleLostAssignments) and returns
// what is to be reassigned like new work. Work given to candidate workers goes into next
// directly.
//
// ids are all members of this round; targets those that may be given work (not leaving).
func (s *coopState) handleLost(lost workSet, next map[string]workSet, ids, targets []string, maxDelay time.Duration, now time.Time) workSet {
	if lost.empty() && !s.revokedInPrevious {
		s.resetDelay()
		return newWorkSet()
	}
	if s.scheduled.IsZero() && containsAll(ids, s.previousMembers) {
		// Nobody left, so nobody can come back for it: a member missed the last SyncGroup
		// (KAFKA-9848). Reassign now.
		return lost.clone()
	}
	if maxDelay <= 0 {
		return lost.clone() // KAFKA-15693
	}
	if !s.scheduled.IsZero() && !now.Before(s.scheduled) {
		// The delay is over: the lost work goes to the workers that joined empty while it ran,
		// or, if there are none, is assigned like new work.
		var cands []string
		for _, c := range s.candidates {
			if _, ok := next[c]; ok && slices.Contains(targets, c) {
				cands = append(cands, c)
			}
		}
		reassign := newWorkSet()
		if len(cands) == 0 {
			reassign = lost.clone()
		} else {
			l := lost.alloc()
			for i, c := range l.Connectors {
				next[cands[i%len(cands)]].conns[c] = struct{}{}
			}
			for i, t := range l.Tasks {
				next[cands[i%len(cands)]].tasks[t] = struct{}{}
			}
		}
		s.resetDelay()
		s.revokedInPrevious = false
		return reassign
	}
	for _, id := range targets {
		if next[id].empty() && !slices.Contains(s.candidates, id) {
			s.candidates = append(s.candidates, id)
		}
	}
	if !s.scheduled.IsZero() && now.Before(s.scheduled) {
		s.delay = min(ceilMillis(s.scheduled.Sub(now)), maxDelay)
	} else {
		s.delay = maxDelay
	}
	s.scheduled = now.Add(s.delay)
	return newWorkSet()
}

// staying returns the ids of the members that are not leaving, sorted; all of them if every
// member is leaving (someone must hold the work).
func staying(members []joinedMember) []string {
	var out []string
	for _, m := range members {
		if m.Meta.Ext == nil || !m.Meta.Ext.Leaving {
			out = append(out, m.ID)
		}
	}
	if len(out) == 0 {
		return memberIDs(members)
	}
	slices.Sort(out)
	return out
}

func (s *coopState) resetDelay() {
	s.candidates = nil
	s.scheduled = time.Time{}
	s.delay = 0
}

// revocationBackoff is Kafka's ExponentialBackoff(1 ms, ×40, maxDelay, no jitter) after n
// successive revoking rebalances: 40 ms, 1.6 s, 64 s, then maxDelay (KAFKA-12495).
func revocationBackoff(n int, maxDelay time.Duration) time.Duration {
	if maxDelay <= 0 {
		return 0
	}
	d := time.Millisecond
	for range n {
		d *= 40
		if d >= maxDelay {
			return maxDelay
		}
	}
	return d
}

func ceilMillis(d time.Duration) time.Duration {
	if r := d % time.Millisecond; r != 0 {
		d += time.Millisecond - r
	}
	return d
}

// loadBalancingRevocations returns what to take from over-loaded workers so that each holds
// floor(total/workers) connectors, or one more for total%workers of them, and likewise for
// tasks; the totals are those configured. Revoked work is reassigned in the next round.
func loadBalancingRevocations(conf workSet, next map[string]workSet, ids []string) map[string]workSet {
	if conf.empty() || len(ids) == 0 {
		return nil
	}
	allEmpty := true
	for _, id := range ids {
		allEmpty = allEmpty && next[id].empty()
	}
	if allEmpty {
		return nil // every worker is new or loses all it had: nothing to balance yet
	}
	out := map[string]workSet{}
	get := func(id string) workSet {
		if _, ok := out[id]; !ok {
			out[id] = newWorkSet()
		}
		return out[id]
	}
	conns := excess(ids, len(conf.conns), func(id string) []string { return next[id].alloc().Connectors })
	for id, cs := range conns {
		for _, c := range cs {
			get(id).conns[c] = struct{}{}
		}
	}
	tasks := excess(ids, len(conf.tasks), func(id string) []connect.TaskID { return next[id].alloc().Tasks })
	for id, ts := range tasks {
		for _, t := range ts {
			get(id).tasks[t] = struct{}{}
		}
	}
	return out
}

// excess returns, per worker, the items above its target: min = total/workers, and the first
// total%workers workers (in id order) that hold more than min may keep min+1. The items revoked
// are the last of each worker's sorted list.
func excess[T any](ids []string, total int, held func(string) []T) map[string][]T {
	n := len(ids)
	lo, extras := total/n, total%n
	atLo, atHi := 0, 0
	for _, id := range ids {
		switch len(held(id)) {
		case lo:
			atLo++
		case lo + 1:
			if extras > 0 {
				atHi++
			}
		}
	}
	if atLo+atHi == n && atHi <= extras {
		return nil
	}
	out := map[string][]T{}
	given := 0
	for _, id := range ids {
		items := held(id)
		if len(items) <= lo {
			continue
		}
		limit := lo
		if given < extras {
			given++
			if len(items) == lo+1 {
				continue
			}
			limit = lo + 1
		}
		out[id] = items[limit:]
	}
	return out
}

func applyRevocations(lb map[string]workSet, toRevoke, next map[string]workSet) {
	for id, r := range lb {
		toRevoke[id].addSet(r)
		next[id].removeSet(r)
	}
}

// assignLeastLoaded gives each connector, then each task, of s (sorted) to the worker holding
// the fewest connectors (tasks), the lowest member id winning ties.
func assignLeastLoaded(s workSet, next map[string]workSet, ids []string) {
	if len(ids) == 0 {
		return
	}
	a := s.alloc()
	for _, c := range a.Connectors {
		best := ids[0]
		for _, id := range ids[1:] {
			if len(next[id].conns) < len(next[best].conns) {
				best = id
			}
		}
		next[best].conns[c] = struct{}{}
	}
	for _, t := range a.Tasks {
		best := ids[0]
		for _, id := range ids[1:] {
			if len(next[id].tasks) < len(next[best].tasks) {
				best = id
			}
		}
		next[best].tasks[t] = struct{}{}
	}
}

func memberIDs(members []joinedMember) []string {
	ids := make([]string, len(members))
	for i, m := range members {
		ids[i] = m.ID
	}
	sort.Strings(ids)
	return ids
}

func containsAll(have, want []string) bool {
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// workSet is a set of connectors and tasks (Java's ConnectorsAndTasks).
type workSet struct {
	conns map[string]struct{}
	tasks map[connect.TaskID]struct{}
}

func newWorkSet() workSet {
	return workSet{conns: map[string]struct{}{}, tasks: map[connect.TaskID]struct{}{}}
}

func setOf(a Allocation) workSet {
	s := newWorkSet()
	for _, c := range a.Connectors {
		s.conns[c] = struct{}{}
	}
	for _, t := range a.Tasks {
		s.tasks[t] = struct{}{}
	}
	return s
}

func (s workSet) clone() workSet {
	return workSet{conns: maps.Clone(s.conns), tasks: maps.Clone(s.tasks)}
}

func (s workSet) empty() bool { return len(s.conns) == 0 && len(s.tasks) == 0 }

func (s workSet) addSet(o workSet) {
	maps.Copy(s.conns, o.conns)
	maps.Copy(s.tasks, o.tasks)
}

func (s workSet) removeSet(o workSet) {
	for c := range o.conns {
		delete(s.conns, c)
	}
	for t := range o.tasks {
		delete(s.tasks, t)
	}
}

func (s workSet) minus(o workSet) workSet {
	r := s.clone()
	r.removeSet(o)
	return r
}

func (s workSet) intersect(o workSet) workSet {
	r := newWorkSet()
	for c := range s.conns {
		if _, ok := o.conns[c]; ok {
			r.conns[c] = struct{}{}
		}
	}
	for t := range s.tasks {
		if _, ok := o.tasks[t]; ok {
			r.tasks[t] = struct{}{}
		}
	}
	return r
}

// alloc returns s as a sorted Allocation.
func (s workSet) alloc() Allocation {
	a := Allocation{Connectors: slices.Sorted(maps.Keys(s.conns)), Tasks: slices.Collect(maps.Keys(s.tasks))}
	slices.SortFunc(a.Tasks, compareTasks)
	return a
}
