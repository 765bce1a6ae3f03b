package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// These tests run real Members against an in-process kfake broker. kfake enforces a minimum
// session timeout of 6 s, so the tests that wait for a dead member use it; heartbeats are
// fast so that rebalances propagate quickly.
const (
	testSession   = 6 * time.Second
	testHeartbeat = 300 * time.Millisecond
	testMaxDelay  = 2 * time.Second
)

// registry is the cluster-wide view of who runs what. It fails the test when an item starts on
// one worker while another still runs it: the cooperative protocol must never allow that.
type registry struct {
	t     *testing.T
	mu    sync.Mutex
	owner map[string]string
	bad   []string
}

func newRegistry(t *testing.T) *registry {
	r := &registry{t: t, owner: map[string]string{}}
	t.Cleanup(func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for _, b := range r.bad {
			t.Error(b)
		}
	})
	return r
}

func keys(a Allocation) []string {
	var out []string
	for _, c := range a.Connectors {
		out = append(out, "c:"+c)
	}
	for _, tk := range a.Tasks {
		out = append(out, "t:"+tk.String())
	}
	return out
}

func (r *registry) start(worker string, a Allocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys(a) {
		if o, ok := r.owner[k]; ok && o != worker {
			r.bad = append(r.bad, fmt.Sprintf("%s started on %s while %s runs it", k, worker, o))
		}
		r.owner[k] = worker
	}
}

func (r *registry) stop(worker string, a Allocation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys(a) {
		if r.owner[k] == worker {
			delete(r.owner, k)
		}
	}
}

// fakeWorker is a Handler that records what it runs.
type fakeWorker struct {
	name string
	reg  *registry
	work Work

	mu       sync.Mutex
	owned    Allocation
	assigns  []Assignment
	revokes  []Allocation
	delayed  bool // saw an assignment with a delay
	snapHook func(ctx context.Context)
}

func (w *fakeWorker) ConfigOffset() int64 { return w.work.Offset }

func (w *fakeWorker) LeaderSnapshot(ctx context.Context) (Work, error) {
	w.mu.Lock()
	hook := w.snapHook
	w.mu.Unlock()
	if hook != nil {
		hook(ctx)
	}
	return w.work, ctx.Err()
}

func (w *fakeWorker) OnRevoked(_ context.Context, a Allocation) {
	w.reg.stop(w.name, a)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.revokes = append(w.revokes, a)
	w.owned = setOf(w.owned).minus(setOf(a)).alloc()
}

func (w *fakeWorker) OnAssigned(_ context.Context, a Assignment) {
	w.reg.start(w.name, a.Assigned)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.assigns = append(w.assigns, a)
	w.delayed = w.delayed || a.Delay > 0
	if a.Err == nil {
		expect := setOf(w.owned)
		expect.addSet(setOf(a.Assigned))
		if got := setOf(a.Owned); !slicesEqual(got.alloc(), expect.alloc()) {
			w.reg.mu.Lock()
			w.reg.bad = append(w.reg.bad, fmt.Sprintf("%s: Owned %v, expected %v", w.name, a.Owned, expect.alloc()))
			w.reg.mu.Unlock()
		}
	}
	w.owned = a.Owned
}

func slicesEqual(a, b Allocation) bool {
	return slices.Equal(a.Connectors, b.Connectors) && slices.Equal(a.Tasks, b.Tasks)
}

func (w *fakeWorker) snapshot() (owned Allocation, assigns []Assignment, revokes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.owned, slices.Clone(w.assigns), len(w.revokes)
}

// testCluster is a kfake broker plus the members started on it.
type testCluster struct {
	t     *testing.T
	addrs []string
	fake  *kfake.Cluster
	reg   *registry
	work  Work
}

func newTestCluster(t *testing.T, work Work) *testCluster {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &testCluster{t: t, addrs: c.ListenAddrs(), fake: c, reg: newRegistry(t), work: work}
}

// node is one started member.
type node struct {
	name   string
	m      *Member
	w      *fakeWorker
	client *kgo.Client
	cancel context.CancelFunc
	done   chan error
}

func (tc *testCluster) start(name string, edit func(*Config)) *node {
	tc.t.Helper()
	client, err := kgo.NewClient(kgo.SeedBrokers(tc.addrs...))
	if err != nil {
		tc.t.Fatal(err)
	}
	w := &fakeWorker{name: name, reg: tc.reg, work: tc.work}
	cfg := Config{
		Client:            client,
		GroupID:           "connect-cluster",
		URL:               "http://" + name + ":8083",
		SessionTimeout:    testSession,
		HeartbeatInterval: testHeartbeat,
		RebalanceTimeout:  10 * time.Second,
		MaxDelay:          testMaxDelay,
		Settings:          map[string]string{"value.converter": jsonConv, "config.storage.topic": "connect-configs"},
		Version:           "0.1.0-test",
		Logger:            slog.New(slog.NewTextHandler(testWriter{tc.t, name}, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Handler:           w,
	}
	if edit != nil {
		edit(&cfg)
	}
	n := &node{name: name, m: New(cfg), w: w, client: client, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	go func() { n.done <- n.m.Run(ctx) }()
	tc.t.Cleanup(func() {
		cancel()
		select {
		case <-n.done:
		case <-time.After(15 * time.Second):
			tc.t.Errorf("%s: Run did not return", name)
		}
		client.Close()
	})
	return n
}

// startTwo starts member a, waits until it leads, then starts member b and waits until the two
// share the work.
func (tc *testCluster) startTwo() (a, b *node) {
	tc.t.Helper()
	a = tc.start("a", nil)
	waitFor(tc.t, 10*time.Second, "a leads", func() error {
		if !a.m.State().Leader {
			return errors.New("not yet")
		}
		return nil
	})
	b = tc.start("b", nil)
	waitFor(tc.t, 15*time.Second, "two workers balanced", func() error { return tc.balanced(a, b) })
	return a, b
}

// stop cancels the member's Run (a graceful stop) and waits for it.
func (n *node) stop(t *testing.T) {
	t.Helper()
	n.cancel()
	select {
	case err := <-n.done:
		if err != nil {
			t.Fatalf("%s: Run: %v", n.name, err)
		}
		n.done <- nil
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: Run did not return", n.name)
	}
}

type testWriter struct {
	t    *testing.T
	name string
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(w.name + ": " + strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() error) time.Duration {
	t.Helper()
	start := time.Now()
	var err error
	for time.Since(start) < timeout {
		if err = cond(); err == nil {
			return time.Since(start)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("after %v, %s: %v", timeout, what, err)
	return 0
}

// balanced checks that the nodes together run all work exactly once, within one connector and
// one task of each other.
func (tc *testCluster) balanced(nodes ...*node) error {
	all := newWorkSet()
	minC, maxC, minT, maxT := 1<<30, -1, 1<<30, -1
	var desc []string
	for _, n := range nodes {
		owned, _, _ := n.w.snapshot()
		s := setOf(owned)
		if !all.intersect(s).empty() {
			return fmt.Errorf("%v runs twice", all.intersect(s).alloc())
		}
		all.addSet(s)
		minC, maxC = min(minC, len(s.conns)), max(maxC, len(s.conns))
		minT, maxT = min(minT, len(s.tasks)), max(maxT, len(s.tasks))
		desc = append(desc, fmt.Sprintf("%s: %d connectors %d tasks", n.name, len(s.conns), len(s.tasks)))
	}
	if want := configured(tc.work); !slicesEqual(all.alloc(), want.alloc()) {
		return fmt.Errorf("running %d connectors %d tasks of %d/%d (%s)", len(all.conns), len(all.tasks), len(want.conns), len(want.tasks), strings.Join(desc, ", "))
	}
	if maxC-minC > 1 || maxT-minT > 1 {
		return fmt.Errorf("unbalanced: %s", strings.Join(desc, ", "))
	}
	return nil
}

func TestMemberThreeWorkersSplitWork(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	a, b, c := tc.start("a", nil), tc.start("b", nil), tc.start("c", nil)
	took := waitFor(t, 15*time.Second, "three workers balanced", func() error { return tc.balanced(a, b, c) })
	t.Logf("balanced after %v", took)
	for _, n := range []*node{a, b, c} {
		owned, _, _ := n.w.snapshot()
		if len(owned.Connectors) != 2 || len(owned.Tasks) != 6 {
			t.Fatalf("%s runs %v", n.name, owned)
		}
	}
	// Exactly one leader, which lists every worker with its version, URL and assignment.
	var leaders []*node
	for _, n := range []*node{a, b, c} {
		st := n.m.State()
		if st.Generation < 1 || st.MemberID == "" || st.Protocol != ProtocolSessioned || st.Err != nil {
			t.Fatalf("%s state %+v", n.name, st)
		}
		if st.Leader {
			leaders = append(leaders, n)
		}
	}
	if len(leaders) != 1 {
		t.Fatalf("%d leaders", len(leaders))
	}
	lst := leaders[0].m.State()
	if len(lst.Workers) != 3 {
		t.Fatalf("leader lists %+v", lst.Workers)
	}
	urls := map[string]bool{}
	for _, w := range lst.Workers {
		if w.Version != "0.1.0-test" || w.Refused != "" || w.MemberID == "" || len(w.Assignment.Tasks) != 6 {
			t.Fatalf("worker %+v", w)
		}
		urls[w.URL] = true
	}
	if !urls["http://a:8083"] || !urls["http://b:8083"] || !urls["http://c:8083"] {
		t.Fatalf("worker URLs %v", urls)
	}
	for _, n := range []*node{a, b, c} {
		if st := n.m.State(); st.LeaderID != lst.MemberID || st.LeaderURL != "http://"+leaders[0].name+":8083" {
			t.Fatalf("%s sees leader %s at %s, want %s", n.name, st.LeaderID, st.LeaderURL, lst.MemberID)
		}
	}
}

func TestMemberGracefulLeave(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	a, b, c := tc.start("a", nil), tc.start("b", nil), tc.start("c", nil)
	waitFor(t, 15*time.Second, "three workers balanced", func() error { return tc.balanced(a, b, c) })
	// A follower leaves. (When the leader leaves, the new leader has no previous assignment
	// and, as in Kafka, reassigns at once; TestMemberLeaderDiesMidRebalance covers that.)
	var leaver *node
	for _, n := range []*node{a, b, c} {
		if !n.m.State().Leader {
			leaver = n
		}
	}
	stay := slices.DeleteFunc([]*node{a, b, c}, func(n *node) bool { return n == leaver })

	leaver.stop(t)
	if owned, _, _ := leaver.w.snapshot(); !owned.Empty() {
		t.Fatalf("%s still runs %v after stopping", leaver.name, owned)
	}
	// The leaver handed its work over in a last rebalance before it left: unlike Kafka, which
	// holds a gracefully departed worker's work for the scheduled delay, nothing waits.
	took := waitFor(t, 10*time.Second, "the work reassigned", func() error { return tc.balanced(stay...) })
	t.Logf("%s's work reassigned %v after its Run returned (max delay %v)", leaver.name, took, testMaxDelay)
	if took >= testMaxDelay {
		t.Fatalf("took %v: the work of a worker that handed it over waited for the scheduled delay", took)
	}
	if stay[0].w.delayed || stay[1].w.delayed {
		t.Fatal("the leader held handed-over work for the scheduled delay")
	}
}

func TestMemberKilled(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	a, b, c := tc.start("a", nil), tc.start("b", nil), tc.start("c", nil)
	waitFor(t, 15*time.Second, "three workers balanced", func() error { return tc.balanced(a, b, c) })
	var victim *node
	for _, n := range []*node{a, b, c} {
		if !n.m.State().Leader {
			victim = n
		}
	}
	survivors := slices.DeleteFunc([]*node{a, b, c}, func(n *node) bool { return n == victim })

	// A kill: the client goes away without LeaveGroup. The coordinator notices only when the
	// session times out.
	start := time.Now()
	victim.client.Close()
	select {
	case err := <-victim.done:
		if !errors.Is(err, kgo.ErrClientClosed) {
			t.Fatalf("Run returned %v", err)
		}
		victim.done <- err
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not notice the closed client")
	}
	waitFor(t, testSession+testMaxDelay+8*time.Second, "the dead worker's work reassigned", func() error {
		return tc.balanced(survivors...)
	})
	took := time.Since(start)
	t.Logf("work reassigned %v after the kill (session %v + max delay %v)", took, testSession, testMaxDelay)
	if took < testMaxDelay {
		t.Fatalf("reassigned after %v, before the scheduled delay could run", took)
	}
	if !survivors[0].w.delayed || !survivors[1].w.delayed {
		t.Fatal("survivors never saw the scheduled delay")
	}
}

func TestMemberSettingsMismatch(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	a, b := tc.startTwo()
	_, _, aRevokes := a.w.snapshot()
	_, _, bRevokes := b.w.snapshot()

	z := tc.start("z", func(c *Config) {
		c.Settings = map[string]string{"value.converter": stringConv, "config.storage.topic": "connect-configs"}
		c.RefusedBackoff = time.Second
	})
	want := "value.converter is " + stringConv + " on this worker but " + jsonConv + " in group connect-cluster (leader http://a:8083)"
	waitFor(t, 10*time.Second, "z refused", func() error {
		if err := z.m.State().Err; err == nil || err.Error() != want || !errors.Is(err, ErrRefused) {
			return fmt.Errorf("state error %v", err)
		}
		return nil
	})
	_, assigns, _ := z.w.snapshot()
	if len(assigns) == 0 || assigns[0].Err == nil || assigns[0].Err.Error() != want || !assigns[0].Owned.Empty() {
		t.Fatalf("z's assignments %+v", assigns)
	}
	// z keeps retrying (every second here); the healthy workers keep their work meanwhile.
	time.Sleep(3 * time.Second)
	if owned, assigns, _ := z.w.snapshot(); !owned.Empty() || len(assigns) < 2 {
		t.Fatalf("z runs %v after %d attempts", owned, len(assigns))
	}
	if err := tc.balanced(a, b); err != nil {
		t.Fatal(err)
	}
	if _, _, n := a.w.snapshot(); n != aRevokes {
		t.Fatal("a lost work because of z")
	}
	if _, _, n := b.w.snapshot(); n != bRevokes {
		t.Fatal("b lost work because of z")
	}
	for _, w := range a.m.State().Workers {
		if w.URL == "http://z:8083" && w.Refused != want {
			t.Fatalf("leader's view of z: %+v", w)
		}
	}
}

func TestMemberLeaderDiesMidRebalance(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	a, b := tc.startTwo()

	// The next time a assigns, it is killed while it reads the config topic: the group is in
	// CompletingRebalance and the others wait in SyncGroup for an assignment that never comes.
	inSnapshot, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	a.w.mu.Lock()
	a.w.snapHook = func(ctx context.Context) {
		once.Do(func() {
			close(inSnapshot)
			<-release
		})
	}
	a.w.mu.Unlock()
	c := tc.start("c", nil)
	select {
	case <-inSnapshot:
	case <-time.After(10 * time.Second):
		t.Fatal("a never assigned")
	}
	start := time.Now()
	a.client.Close()
	close(release)
	if err := <-a.done; !errors.Is(err, kgo.ErrClientClosed) {
		t.Fatalf("a's Run: %v", err)
	}
	a.done <- nil
	took := waitFor(t, testSession+10*time.Second, "b and c take over", func() error { return tc.balanced(b, c) })
	t.Logf("b and c balanced %v after the leader died mid-rebalance", time.Since(start))
	_ = took
	if !b.m.State().Leader && !c.m.State().Leader {
		t.Fatal("no new leader")
	}
}

func TestMemberRevokesWorkWhenCoordinatorUnreachable(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	a, b := tc.startTwo()

	// b's group requests stop reaching the coordinator (a partition on b's side only).
	victim := b.m.State().MemberID
	var mu sync.Mutex
	cut := true
	for _, key := range []kmsg.Key{kmsg.Heartbeat, kmsg.JoinGroup, kmsg.SyncGroup} {
		tc.fake.ControlKey(int16(key), func(req kmsg.Request) (kmsg.Response, error, bool) {
			tc.fake.KeepControl()
			mu.Lock()
			defer mu.Unlock()
			var id string
			switch r := req.(type) {
			case *kmsg.HeartbeatRequest:
				id = r.MemberID
			case *kmsg.JoinGroupRequest:
				id = r.MemberID
			case *kmsg.SyncGroupRequest:
				id = r.MemberID
			}
			if !cut || id != victim {
				return nil, nil, false
			}
			resp := req.ResponseKind()
			switch r := resp.(type) {
			case *kmsg.HeartbeatResponse:
				r.ErrorCode = kerr.CoordinatorNotAvailable.Code
			case *kmsg.JoinGroupResponse:
				r.ErrorCode = kerr.CoordinatorNotAvailable.Code
			case *kmsg.SyncGroupResponse:
				r.ErrorCode = kerr.CoordinatorNotAvailable.Code
			}
			return resp, nil, true
		})
	}
	start := time.Now()
	took := waitFor(t, testSession+5*time.Second, "b stops its work on its own", func() error {
		if owned, _, _ := b.w.snapshot(); !owned.Empty() {
			return fmt.Errorf("b runs %v", owned)
		}
		return nil
	})
	t.Logf("b stopped its work %v after its heartbeats started failing", took)
	if took < testSession-time.Second {
		t.Fatalf("b gave up after %v, before the session timeout", took)
	}
	waitFor(t, testMaxDelay+8*time.Second, "a takes over", func() error { return tc.balanced(a) })
	t.Logf("a runs everything %v after the cut", time.Since(start))
	mu.Lock()
	cut = false
	mu.Unlock()
	waitFor(t, testMaxDelay+10*time.Second, "b back", func() error { return tc.balanced(a, b) })
}

// TestMemberForgottenByTheCoordinatorStopsItsWork: a heartbeat answered UNKNOWN_MEMBER_ID (the
// coordinator dropped the member, or lost the group's state in a restart) makes the member stop
// everything it runs before it rejoins, as a rebalance without it may have handed its work out.
func TestMemberForgottenByTheCoordinatorStopsItsWork(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	a, b := tc.startTwo()
	owned, _, _ := b.w.snapshot()
	if owned.Empty() {
		t.Fatal("b runs nothing")
	}
	victim := b.m.State().MemberID
	var once sync.Once
	tc.fake.ControlKey(int16(kmsg.Heartbeat), func(req kmsg.Request) (kmsg.Response, error, bool) {
		tc.fake.KeepControl()
		if req.(*kmsg.HeartbeatRequest).MemberID != victim {
			return nil, nil, false
		}
		var resp kmsg.Response
		once.Do(func() {
			r := req.ResponseKind().(*kmsg.HeartbeatResponse)
			r.ErrorCode = kerr.UnknownMemberID.Code
			resp = r
		})
		return resp, nil, resp != nil
	})
	waitFor(t, 5*testHeartbeat+2*time.Second, "b stops all its work", func() error {
		b.w.mu.Lock()
		defer b.w.mu.Unlock()
		for _, r := range b.w.revokes {
			if setOf(owned).minus(setOf(r)).alloc().Empty() {
				return nil
			}
		}
		return fmt.Errorf("b revoked %v of %v", b.w.revokes, owned)
	})
	waitFor(t, testMaxDelay+10*time.Second, "a and b share the work again", func() error { return tc.balanced(a, b) })
}

func TestMemberEagerGroup(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	b := tc.start("b", nil)
	c := tc.start("c", func(c *Config) { c.Protocol = ModeCompatible })
	waitFor(t, 15*time.Second, "two workers balanced", func() error { return tc.balanced(b, c) })
	if p := b.m.State().Protocol; p != ProtocolCompatible {
		t.Fatalf("protocol %q before the eager worker joins", p)
	}
	// One eager worker pulls the group down to the "default" protocol. The cooperative
	// workers joined with their work still running; the registry checks that nothing starts
	// elsewhere before they have stopped it.
	a := tc.start("a", func(c *Config) { c.Protocol = ModeEager })
	waitFor(t, 15*time.Second, "three workers balanced", func() error { return tc.balanced(a, b, c) })
	for _, n := range []*node{a, b, c} {
		if st := n.m.State(); st.Protocol != ProtocolDefault {
			t.Fatalf("%s uses %q", n.name, st.Protocol)
		}
	}
	c.stop(t)
	waitFor(t, 10*time.Second, "two workers balanced", func() error { return tc.balanced(a, b) })
}

func TestMemberConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{
		"no client":    {GroupID: "g", Handler: &fakeWorker{}},
		"no group":     {Client: &kgo.Client{}, Handler: &fakeWorker{}},
		"no handler":   {Client: &kgo.Client{}, GroupID: "g"},
		"bad protocol": {Client: &kgo.Client{}, GroupID: "g", Handler: &fakeWorker{}, Protocol: "cooperative"},
	} {
		if err := New(cfg).Run(context.Background()); err == nil {
			t.Errorf("%s: Run accepted it", name)
		}
	}
}

func TestMemberCoordinatorMoves(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	tc := &testCluster{t: t, addrs: c.ListenAddrs(), fake: c, reg: newRegistry(t), work: sixByThree()}
	a, b := tc.start("a", nil), tc.start("b", nil)
	waitFor(t, 15*time.Second, "two workers balanced", func() error { return tc.balanced(a, b) })
	// Move the coordinator (kgo gets NOT_COORDINATOR, finds the new one and retries).
	before := c.CoordinatorFor("connect-cluster")
	for i := 0; i < 20 && c.CoordinatorFor("connect-cluster") == before; i++ {
		c.RehashCoordinators()
	}
	if c.CoordinatorFor("connect-cluster") == before {
		t.Skip("kfake kept the coordinator on the same broker")
	}
	time.Sleep(3 * testHeartbeat) // heartbeats go to the new coordinator
	cc := tc.start("c", nil)
	waitFor(t, 15*time.Second, "three workers balanced after the move", func() error { return tc.balanced(a, b, cc) })
}

func TestMemberGroupIDOfAConsumerGroup(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	// A consumer group already uses the id.
	cl, err := kgo.NewClient(kgo.SeedBrokers(tc.addrs...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	join := kmsg.NewPtrJoinGroupRequest()
	join.Group, join.SessionTimeoutMillis, join.RebalanceTimeoutMillis, join.ProtocolType = "connect-cluster", 6000, 6000, "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte{0, 0}
	join.Protocols = []kmsg.JoinGroupRequestProtocol{p}
	if _, err := join.RequestWith(context.Background(), cl); err != nil {
		t.Fatal(err)
	}
	n := tc.start("a", nil)
	select {
	case err := <-n.done:
		if !errors.Is(err, kerr.InconsistentGroupProtocol) || !strings.Contains(err.Error(), "connect-<name>") {
			t.Fatalf("Run: %v", err)
		}
		n.done <- err
	case <-time.After(10 * time.Second):
		t.Fatal("Run kept trying")
	}
}

// rebalanceLog is a RebalanceObserver that keeps what it was told.
type rebalanceLog struct {
	mu          sync.Mutex
	started     int
	completed   []int32
	rebalancing bool
}

func (l *rebalanceLog) RebalanceStarted() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.started++
	l.rebalancing = true
}

func (l *rebalanceLog) RebalanceCompleted(gen int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.completed = append(l.completed, gen)
	l.rebalancing = false
}

// TestMemberReportsRebalances: each worker is told when its rebalances start and complete, with
// the generation, and is not left rebalancing once the group is balanced.
func TestMemberReportsRebalances(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	logs := map[string]*rebalanceLog{"a": {}, "b": {}}
	a := tc.start("a", func(c *Config) { c.Rebalances = logs["a"] })
	b := tc.start("b", func(c *Config) { c.Rebalances = logs["b"] })
	waitFor(t, 15*time.Second, "two workers balanced, done rebalancing", func() error {
		if err := tc.balanced(a, b); err != nil {
			return err
		}
		for name, l := range logs {
			l.mu.Lock()
			busy, done := l.rebalancing, len(l.completed)
			l.mu.Unlock()
			if busy || done == 0 {
				return fmt.Errorf("%s: rebalancing %v after %d completed", name, busy, done)
			}
		}
		return nil
	})
	for name, n := range map[string]*node{"a": a, "b": b} {
		l := logs[name]
		l.mu.Lock()
		last := l.completed[len(l.completed)-1]
		if l.started < len(l.completed) || last != n.m.State().Generation {
			t.Errorf("%s: %d started, completed generations %v, member at generation %d", name, l.started, l.completed, n.m.State().Generation)
		}
		l.mu.Unlock()
	}
}

// When the leader has left, the group has one new leader. kfake tells every member of the round
// that follows that it leads (each JoinGroup response names the member it goes to as the leader),
// but takes the assignments of only one of them: the member that leads is the one the assignment
// names, as in Kafka's DistributedHerder.isLeader.
func TestMemberOneLeaderAfterTheLeaderLeaves(t *testing.T) {
	t.Parallel()
	tc := newTestCluster(t, sixByThree())
	a, b, c := tc.start("a", nil), tc.start("b", nil), tc.start("c", nil)
	waitFor(t, 15*time.Second, "three workers balanced", func() error { return tc.balanced(a, b, c) })
	var leader *node
	for _, n := range []*node{a, b, c} {
		if n.m.State().Leader {
			leader = n
		}
	}
	stay := slices.DeleteFunc([]*node{a, b, c}, func(n *node) bool { return n == leader })
	gone := leader.m.State().MemberID
	leader.stop(t)
	// The round after the leader left: both members applied one generation led by another member.
	var last []Assignment
	waitFor(t, 10*time.Second, "a round without the leader", func() error {
		last = last[:0]
		for _, n := range stay {
			_, assigns, _ := n.w.snapshot()
			if len(assigns) == 0 {
				return errors.New("no assignment yet")
			}
			last = append(last, assigns[len(assigns)-1])
		}
		if last[0].Generation != last[1].Generation || last[0].LeaderID == gone {
			return fmt.Errorf("generations %d and %d, leader %s", last[0].Generation, last[1].Generation, last[0].LeaderID)
		}
		return nil
	})
	var leaders []string
	for i, n := range stay {
		if last[i].Leader {
			leaders = append(leaders, n.name)
		}
	}
	if len(leaders) != 1 {
		t.Fatalf("leaders of generation %d after %s left: %v, want one", last[0].Generation, leader.name, leaders)
	}
}
