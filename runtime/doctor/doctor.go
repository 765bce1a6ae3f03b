// Package doctor is the checklist for a worker that will not join its cluster, made executable
// (wasmconnect doctor): it looks at what the worker's settings point to (the brokers, the internal
// topics, the group and its members, the plugin path, the REST URLs, the clocks) and reports each
// finding with the fix, without starting a worker or writing to the internal topics.
package doctor

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/wasmconnect/wasmconnect/runtime/cluster"
	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient"
	"github.com/wasmconnect/wasmconnect/runtime/rest"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// Status is how a check came out.
type Status string

const (
	OK      Status = "ok"
	Warn    Status = "warn"    // worth a look, not why a worker fails
	Problem Status = "problem" // a cause of a worker that fails or misbehaves
	Skipped Status = "skipped" // could not be checked (say, the broker is down)
)

// Finding is one result of a check: what was found and, unless all is well, what to do about it.
type Finding struct {
	Check   string `json:"check"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// Report is every finding of one run, in the order the checks ran.
type Report struct {
	Worker   string    `json:"worker"` // the advertised REST URL
	GroupID  string    `json:"group_id"`
	Findings []Finding `json:"findings"`
}

// Problems counts the findings with status Problem.
func (r Report) Problems() int {
	n := 0
	for _, f := range r.Findings {
		if f.Status == Problem {
			n++
		}
	}
	return n
}

// Options tune a run; the zero value is usable.
type Options struct {
	// Timeout bounds each network check (default 5 s).
	Timeout time.Duration
	// Version is this binary's wasmconnect version, compared with the members'.
	Version string
	// SharedSettings returns the settings that must agree across the cluster, as the worker sends
	// them to the group (node.SharedSettings); nil: the settings check is skipped.
	SharedSettings func(*config.Worker, *wasmhost.Host) map[string]string
}

// Check names, in the order they run.
const (
	CheckPlugins   = "plugin.path"
	CheckBroker    = "broker"
	CheckTopics    = "internal topics"
	CheckGroup     = "group"
	CheckSettings  = "settings"
	CheckVersions  = "versions"
	CheckRESTURL   = "rest url"
	CheckClockSkew = "clock"
)

type doctor struct {
	cfg   *config.Worker
	opts  Options
	r     Report
	http  *http.Client
	kopts []kgo.Opt // the worker's own clients' options (seed brokers, security)
}

func (d *doctor) add(check string, st Status, fix, format string, args ...any) {
	d.r.Findings = append(d.r.Findings, Finding{Check: check, Status: st, Message: fmt.Sprintf(format, args...), Fix: fix})
}

// Run runs every check for a worker with these settings.
func Run(ctx context.Context, cfg *config.Worker, opts Options) Report {
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	d := &doctor{cfg: cfg, opts: opts, http: &http.Client{Timeout: opts.Timeout}}
	if setup, err := rest.NewSetup(cfg.REST); err == nil {
		// The client workers forward with: it trusts the CAs of an https listener and presents
		// this worker's certificate where clients must.
		c := *setup.Client
		c.Timeout = opts.Timeout
		d.http = &c
	}
	d.r.GroupID = cfg.GroupID
	d.r.Worker = d.advertised().String()

	host := d.plugins(ctx)
	if host != nil {
		defer host.Close(context.Background())
	}
	cl, err := d.broker(ctx)
	if err != nil {
		for _, c := range []string{CheckTopics, CheckGroup, CheckSettings, CheckVersions, CheckClockSkew} {
			d.add(c, Skipped, "", "not checked: the broker cannot be reached")
		}
		d.restURL(ctx, nil)
		return d.r
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	d.topics(ctx, adm)
	members := d.group(ctx, cl)
	d.settings(members, host)
	d.versions(members)
	d.restURL(ctx, members)
	d.clock(ctx, cl, adm)
	return d.r
}

// plugins loads plugin.path as a worker would and reports the modules that fail to load.
func (d *doctor) plugins(ctx context.Context) *wasmhost.Host {
	cfg := d.cfg
	h, err := wasmhost.New(ctx, wasmhost.Config{
		PluginPath: cfg.PluginPath, CacheDir: cfg.PluginCacheDir, MemoryLimitBytes: cfg.PluginMemoryMax,
		CallTimeout: cfg.PluginCallTimeout, FSAllow: cfg.PluginFSAllow, NetAllow: cfg.PluginNetAllow,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		d.add(CheckPlugins, Problem, "fix the setting named in the error (plugin.path, plugin.fs.allow, plugin.memory.max.bytes)",
			"the plugin host cannot start: %v", err)
		return nil
	}
	errs := h.LoadErrors()
	for _, e := range errs {
		d.add(CheckPlugins, Problem, "rebuild the module against the ABI (sdk/ABI.md) or remove it from plugin.path; the worker skips it and connectors that use its plugins fail",
			"module %s is not loaded: %v", e.Path, e.Err)
	}
	n := 0
	for _, p := range h.Plugins() {
		if p.Kind == wire.KindSource || p.Kind == wire.KindSink {
			n++
		}
	}
	switch {
	case n == 0:
		d.add(CheckPlugins, Warn, "point plugin.path at the directory of the built plugins (make plugins builds them into build/plugins)",
			"no connector plugins in plugin.path=%s", strings.Join(cfg.PluginPath, ","))
	case len(errs) == 0:
		d.add(CheckPlugins, OK, "", "%d plugins (%d connectors) from %d modules in plugin.path=%s",
			len(h.Plugins()), n, len(h.ModuleNames()), strings.Join(cfg.PluginPath, ","))
	}
	return h
}

// broker connects with the worker's client settings and reports the latency of a metadata request.
func (d *doctor) broker(ctx context.Context) (*kgo.Client, error) {
	cfg := d.cfg
	servers := strings.Join(cfg.BootstrapServers, ",")
	clients, err := kafkaclient.NewClients(cfg.Kafka)
	if err != nil {
		d.add(CheckBroker, Problem, "fix the Kafka client settings named in the error", "%v", err)
		return nil, err
	}
	fctx, failFast, stop := kafkaclient.FailFast(ctx, clients.Internal.Auth)
	defer stop()
	d.kopts = append([]kgo.Opt{kgo.SeedBrokers(cfg.BootstrapServers...), kgo.ClientID("wasmconnect-doctor")}, clients.Internal.Opts...)
	cl, err := kgo.NewClient(append(slices.Clone(d.kopts), failFast, kgo.RequestRetries(0))...)
	if err != nil {
		d.add(CheckBroker, Problem, "fix bootstrap.servers", "bootstrap.servers=%s: %v", servers, err)
		return nil, err
	}
	mctx, cancel := context.WithTimeout(fctx, d.opts.Timeout)
	start := time.Now()
	m, err := kadm.NewClient(cl).BrokerMetadata(mctx)
	took := time.Since(start)
	cancel()
	if cause := kafkaclient.Cause(fctx, nil); cause != nil {
		err = cause
	}
	if err != nil {
		cl.Close()
		d.add(CheckBroker, Problem, "check that a broker runs at bootstrap.servers and that this machine reaches it (host, port, firewall), and that security.protocol and the sasl.*/ssl.* settings match its listener",
			"no broker answers at bootstrap.servers=%s within %s: %v", servers, d.opts.Timeout, err)
		return nil, err
	}
	cl.Close()
	// The client for the other checks: with retries, now that the brokers are known to answer.
	cl, err = kgo.NewClient(d.kopts...)
	if err != nil {
		return nil, err
	}
	d.add(CheckBroker, OK, "", "%d broker(s) of cluster %s answer at bootstrap.servers=%s; metadata took %s",
		len(m.Brokers), m.Cluster, servers, took.Round(time.Microsecond))
	return cl, nil
}

// topics checks the three internal topics as the worker would at start: each exists (or will be
// created), is exactly compacted, the config topic has one partition, and each has the
// replication it was meant to have.
func (d *doctor) topics(ctx context.Context, adm *kadm.Client) {
	tctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	specs := []config.Topic{d.cfg.Topics.Config, d.cfg.Topics.Offsets, d.cfg.Topics.Status}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	details, err := adm.ListTopics(tctx, names...)
	if err != nil {
		d.add(CheckTopics, Problem, "grant this worker's principal Describe on the internal topics", "listing %s: %v", strings.Join(names, ", "), err)
		return
	}
	configs, cerr := adm.DescribeTopicConfigs(tctx, names...)
	for _, s := range specs {
		t, ok := details[s.Name]
		if !ok || errors.Is(t.Err, kerr.UnknownTopicOrPartition) {
			d.add(CheckTopics, OK, "", "%s=%s does not exist yet: the first worker creates it (compacted, %d partition(s), replication factor %d)",
				s.Key, s.Name, s.Partitions, s.ReplicationFactor)
			continue
		}
		if t.Err != nil {
			d.add(CheckTopics, Problem, "grant this worker's principal Describe on the topic", "%s=%s: %v", s.Key, s.Name, t.Err)
			continue
		}
		rf := 0
		for _, p := range t.Partitions {
			rf = max(rf, len(p.Replicas))
		}
		policy := ""
		if cerr == nil {
			if rc, err := configs.On(s.Name, nil); err == nil {
				for _, c := range rc.Configs {
					if c.Key == "cleanup.policy" && c.Value != nil {
						policy = *c.Value
					}
				}
			}
		}
		bad := false
		if policy != "" && strings.TrimSpace(strings.ToLower(policy)) != "compact" {
			bad = true
			d.add(CheckTopics, Problem, fmt.Sprintf("kafka-configs.sh --bootstrap-server %s --alter --entity-type topics --entity-name %s --add-config cleanup.policy=compact",
				strings.Join(d.cfg.BootstrapServers, ","), s.Name),
				"%s=%s has cleanup.policy=%s: Kafka Connect requires compact (deletion would lose connector configs, offsets or statuses), and the worker refuses to start", s.Key, s.Name, policy)
		}
		if s.Key == "config.storage.topic" && len(t.Partitions) != 1 {
			bad = true
			d.add(CheckTopics, Problem, fmt.Sprintf("recreate %s with 1 partition, or set config.storage.topic to a topic that has one", s.Name),
				"%s=%s has %d partitions; the config topic must have exactly 1 (its records are only meaningful in one total order)", s.Key, s.Name, len(t.Partitions))
		}
		if s.ReplicationFactor > 0 && rf < int(s.ReplicationFactor) {
			d.add(CheckTopics, Warn, fmt.Sprintf("increase the replication of %s (kafka-reassign-partitions.sh) or set %s to what the cluster can hold", s.Name, replicationKey(s.Key)),
				"%s=%s has replication factor %d, less than %s=%d: one broker's loss can lose it", s.Key, s.Name, rf, replicationKey(s.Key), s.ReplicationFactor)
		}
		if !bad {
			d.add(CheckTopics, OK, "", "%s=%s: %d partition(s), replication factor %d, cleanup.policy=%s", s.Key, s.Name, len(t.Partitions), rf, policy)
		}
	}
}

func replicationKey(topicKey string) string {
	return strings.TrimSuffix(topicKey, "topic") + "replication.factor"
}

// member is one group member as its JoinGroup metadata describes it.
type member struct {
	id, clientHost string
	meta           cluster.MemberMetadata
	assignment     *cluster.MemberAssignment
}

// group describes the Connect group: its state, members, leader and generation.
func (d *doctor) group(ctx context.Context, cl *kgo.Client) []member {
	gctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{d.cfg.GroupID}
	resp, err := req.RequestWith(gctx, cl)
	if err == nil && len(resp.Groups) == 1 {
		err = kerr.ErrorForCode(resp.Groups[0].ErrorCode)
		if errors.Is(err, kerr.GroupIDNotFound) {
			d.add(CheckGroup, OK, "", "group.id=%s does not exist yet: this worker would be the first member", d.cfg.GroupID)
			return nil
		}
	}
	if err != nil {
		d.add(CheckGroup, Problem, "grant this worker's principal Describe on the group", "describing group.id=%s: %v", d.cfg.GroupID, err)
		return nil
	}
	g := resp.Groups[0]
	if len(g.Members) == 0 {
		d.add(CheckGroup, OK, "", "group.id=%s has no members (state %s): this worker would be the first", d.cfg.GroupID, g.State)
		return nil
	}
	if g.ProtocolType != cluster.ProtocolType {
		d.add(CheckGroup, Problem, "give the workers a group.id that no consumer group uses (sink connectors' groups are connect-<name>)",
			"group.id=%s is a %q group with %d member(s), not a Connect group: a worker cannot join it", d.cfg.GroupID, g.ProtocolType, len(g.Members))
		return nil
	}
	var members []member
	var leaderURL, leaderID string
	for _, m := range g.Members {
		mm := member{id: m.MemberID, clientHost: m.ClientHost}
		if err := mm.meta.UnmarshalBinary(m.ProtocolMetadata); err != nil {
			d.add(CheckGroup, Warn, "", "member %s (%s) sent metadata this worker cannot read: %v", m.MemberID, m.ClientHost, err)
			continue
		}
		if len(m.MemberAssignment) > 0 {
			var a cluster.MemberAssignment
			if a.UnmarshalBinary(m.MemberAssignment) == nil {
				mm.assignment = &a
				leaderURL, leaderID = a.LeaderURL, a.Leader
			}
		}
		members = append(members, mm)
	}
	urls := make([]string, len(members))
	for i, m := range members {
		urls[i] = m.meta.URL
	}
	slices.Sort(urls)
	msg := fmt.Sprintf("group.id=%s: %d member(s) %s, state %s, protocol %s", d.cfg.GroupID, len(members), strings.Join(urls, " "), g.State, g.Protocol)
	if leaderURL == "" {
		d.add(CheckGroup, Warn, "wait for the rebalance to finish and run doctor again; if it never does, look at the members' logs",
			"%s; no leader yet (a rebalance is under way)", msg)
		return members
	}
	gen, err := d.generation(ctx, leaderURL)
	if err != nil {
		d.add(CheckGroup, Problem, "make the leader's rest.advertised.host.name and rest.advertised.port an address the other workers reach (they forward writes to it)",
			"%s; the leader (member %s) advertises %s, which this machine cannot reach: %v", msg, leaderID, leaderURL, err)
		return members
	}
	if gen < 0 {
		d.add(CheckGroup, OK, "", "%s; leader %s answers (its GET /workers gives no generation)", msg, leaderURL)
		return members
	}
	d.add(CheckGroup, OK, "", "%s; leader %s answers, generation %d", msg, leaderURL, gen)
	return members
}

// generation asks a worker's GET /workers for the generation (DescribeGroups does not say it); -1
// when it answers without one (a Java worker, or REST authentication this tool has no credentials
// for). Only a worker that does not answer is an error.
func (d *doctor) generation(ctx context.Context, workerURL string) (int32, error) {
	body, code, err := d.get(ctx, strings.TrimSuffix(workerURL, "/")+"/workers")
	if err != nil {
		return 0, err
	}
	var w struct {
		Generation *int32 `json:"generation"`
	}
	if code != http.StatusOK || json.Unmarshal(body, &w) != nil || w.Generation == nil {
		return -1, nil
	}
	return *w.Generation, nil
}

// get sends GET url and returns the status and body of any HTTP response (a 401 still proves the
// URL is reachable); only a failure to reach the URL is an error.
func (d *doctor) get(ctx context.Context, u string) ([]byte, int, error) {
	rctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return b, resp.StatusCode, err
}

// settings compares the settings that must agree across the cluster with each member's.
func (d *doctor) settings(members []member, host *wasmhost.Host) {
	switch {
	case d.opts.SharedSettings == nil:
		d.add(CheckSettings, Skipped, "", "not checked: no way to compute the shared settings was given")
		return
	case host == nil:
		d.add(CheckSettings, Skipped, "", "not checked: the plugin host did not start (the converters name classes it resolves)")
		return
	}
	mine := d.opts.SharedSettings(d.cfg, host)
	self := d.r.Worker
	compared := 0
	for _, m := range members {
		if m.meta.URL == self || m.meta.Ext == nil {
			continue
		}
		compared++
		for _, diff := range cluster.DiffSettings(mine, m.meta.Ext.Settings) {
			d.add(CheckSettings, Problem,
				fmt.Sprintf("set %s=%s on this worker as the group has it, or give this worker its own group.id and internal topics to form another cluster", diff.Key, diff.Theirs),
				"%s is %s here but %s on %s: the group's leader refuses this worker", diff.Key, diff.Mine, diff.Theirs, m.meta.URL)
		}
	}
	if compared == 0 {
		d.add(CheckSettings, OK, "", "no other wasmconnect member to compare the shared settings with")
	} else if !slices.ContainsFunc(d.r.Findings, func(f Finding) bool { return f.Check == CheckSettings }) {
		d.add(CheckSettings, OK, "", "the shared settings (%d) agree with the group's %d other wasmconnect member(s)", len(mine), compared)
	}
}

// versions reports members that run another wasmconnect version than this binary.
func (d *doctor) versions(members []member) {
	skew := false
	for _, m := range members {
		v := "a Java Kafka Connect worker"
		if m.meta.Ext != nil {
			v = m.meta.Ext.Version
		}
		if m.meta.Ext == nil || v != d.opts.Version {
			skew = true
			d.add(CheckVersions, Warn, "run the same version on every worker; mixed versions are for the length of a rolling upgrade",
				"%s runs %s; this binary is %s", m.meta.URL, v, d.opts.Version)
		}
	}
	if !skew {
		d.add(CheckVersions, OK, "", "every member runs %s", d.opts.Version)
	}
}

// advertised is the URL this worker announces to the group.
func (d *doctor) advertised() *url.URL {
	return d.cfg.AdvertisedURL(d.listenerPort())
}

func (d *doctor) listenerPort() int {
	_, p, _ := net.SplitHostPort(d.cfg.RESTAddr())
	var port int
	fmt.Sscan(p, &port)
	return port
}

// restURL checks that the advertised URL resolves and answers (others forward requests to it),
// and that every member's URL answers from here.
func (d *doctor) restURL(ctx context.Context, members []member) {
	adv := d.advertised()
	fix := "set rest.advertised.host.name (and rest.advertised.port, rest.advertised.listener) to an address the other workers reach; they forward requests to it"
	if _, err := net.DefaultResolver.LookupHost(ctx, adv.Hostname()); err != nil {
		d.add(CheckRESTURL, Problem, fix, "the advertised URL %s does not resolve: %v", adv, err)
		return
	}
	advErr := d.reach(ctx, adv.String())
	listener := d.listenerURL()
	switch {
	case advErr == nil:
		d.add(CheckRESTURL, OK, "", "the advertised URL %s answers", adv)
	case d.reach(ctx, listener) == nil:
		d.add(CheckRESTURL, Problem, fix,
			"the worker answers on its listener %s but not at its advertised URL %s (%v): other workers cannot reach it", listener, adv, advErr)
	default:
		where := adv.String()
		if strings.TrimSuffix(listener, "/") != strings.TrimSuffix(where, "/") {
			where += " or " + listener
		}
		d.add(CheckRESTURL, Warn, "start the worker and run doctor again to check the URL",
			"no worker answers at %s: not running, so whether others reach it is not known", where)
	}
	if loopback(adv.String()) {
		for _, m := range members {
			if m.meta.URL != adv.String() && !loopback(m.meta.URL) {
				d.add(CheckRESTURL, Problem, fix, "the advertised URL %s is a loopback address, but member %s is elsewhere (%s): it cannot reach this worker", adv, m.id, m.meta.URL)
				break
			}
		}
	}
	for _, m := range members {
		if m.meta.URL == adv.String() {
			continue
		}
		if err := d.reach(ctx, m.meta.URL); err != nil {
			d.add(CheckRESTURL, Problem, "make that worker's rest.advertised.* an address the others reach",
				"member %s (on %s) advertises %s, which does not answer from here: %v", m.id, m.clientHost, m.meta.URL, err)
		}
	}
}

func (d *doctor) reach(ctx context.Context, u string) error {
	_, _, err := d.get(ctx, strings.TrimSuffix(u, "/")+"/")
	return err
}

// loopback reports whether a URL's host is this machine only (localhost, 127.0.0.0/8, ::1).
func loopback(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	h := p.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// listenerURL is where the worker listens, as this machine reaches it.
func (d *doctor) listenerURL() string {
	l := d.cfg.REST.Listeners[0]
	host := l.Hostname()
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return (&url.URL{Scheme: l.Scheme, Host: net.JoinHostPort(host, fmt.Sprint(d.listenerPort()))}).String()
}

// ClockTopic is the topic the clock check writes one record to: created with
// message.timestamp.type=LogAppendTime, so that the broker stamps the record with its own clock.
const ClockTopic = "wasmconnect-doctor-clock"

// clock compares this machine's clock with the broker's: the LogAppendTime the broker gives a
// record, against the middle of the time the produce took here.
func (d *doctor) clock(ctx context.Context, cl *kgo.Client, adm *kadm.Client) {
	cctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()
	resp, err := adm.CreateTopic(cctx, 1, -1, map[string]*string{
		"message.timestamp.type": kadm.StringPtr("LogAppendTime"), "retention.ms": kadm.StringPtr("600000"),
	}, ClockTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		d.add(CheckClockSkew, Skipped, "grant Create and Write on topic "+ClockTopic+" to check the clock", "not checked: creating %s: %v", ClockTopic, err)
		return
	}
	before := time.Now()
	stamp, err := produceStamped(cctx, cl, adm, ClockTopic, []byte(d.r.Worker))
	after := time.Now()
	if err != nil {
		d.add(CheckClockSkew, Skipped, "grant Write on topic "+ClockTopic+" to check the clock", "not checked: writing to %s: %v", ClockTopic, err)
		return
	}
	rtt := after.Sub(before)
	skew := stamp.Sub(before.Add(rtt / 2))
	margin := rtt/2 + time.Millisecond // the broker's time has millisecond precision
	abs := max(skew, -skew)
	fix := "synchronise the clocks of this machine and the brokers (NTP, chrony)"
	switch {
	case abs > 30*time.Second+margin:
		d.add(CheckClockSkew, Problem, fix, "this clock is %s off the broker's (±%s): session keys, scheduled rebalances and record timestamps go wrong",
			skew.Round(time.Millisecond), margin.Round(time.Millisecond))
	case abs > 2*time.Second+margin:
		d.add(CheckClockSkew, Warn, fix, "this clock is %s off the broker's (±%s)", skew.Round(time.Millisecond), margin.Round(time.Millisecond))
	default:
		d.add(CheckClockSkew, OK, "", "this clock is within %s of the broker's", (abs + margin).Round(time.Millisecond))
	}
}

// produceStamped writes one record to partition 0 of topic, asking for the broker's LogAppendTime
// (the topic's message.timestamp.type, and the batch's timestamp type for brokers that go by the
// batch, such as the embedded one), and returns the time the broker gave it.
func produceStamped(ctx context.Context, cl *kgo.Client, adm *kadm.Client, topic string, value []byte) (time.Time, error) {
	details, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return time.Time{}, err
	}
	p, ok := details[topic].Partitions[0]
	if !ok {
		return time.Time{}, fmt.Errorf("%s has no partition 0", topic)
	}
	now := time.Now().UnixMilli()
	rec := kmsg.Record{Value: value}
	rec.Length = int32(len(rec.AppendTo(nil)) - 1) // everything after the length, a 1-byte varint while 0
	batch := kmsg.RecordBatch{
		Magic: 2, Attributes: 0x0008, // LogAppendTime
		FirstTimestamp: now, MaxTimestamp: now, ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: 1, Records: rec.AppendTo(nil),
	}
	raw := batch.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	req := kmsg.NewPtrProduceRequest()
	req.Acks, req.TimeoutMillis = -1, 5000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic, rt.TopicID = topic, details[topic].ID // produce v13 names topics by id
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Records = raw
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl.Broker(int(p.Leader)))
	if err != nil {
		return time.Time{}, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return time.Time{}, fmt.Errorf("malformed produce response")
	}
	pr := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(pr.ErrorCode); err != nil {
		return time.Time{}, err
	}
	if pr.LogAppendTime < 0 {
		return time.Time{}, fmt.Errorf("the broker did not stamp the record with its time (message.timestamp.type=LogAppendTime)")
	}
	return time.UnixMilli(pr.LogAppendTime), nil
}
