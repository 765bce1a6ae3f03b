package config

import (
	"strconv"
	"strings"
	"time"
)

// Cluster is how a distributed worker takes part in its group.
type Cluster struct {
	Protocol              string        // connect.protocol: eager, compatible or sessioned (the default)
	SessionTimeout        time.Duration // session.timeout.ms (10000)
	HeartbeatInterval     time.Duration // heartbeat.interval.ms (3000)
	RebalanceTimeout      time.Duration // rebalance.timeout.ms (60000)
	ScheduledRebalanceMax time.Duration // scheduled.rebalance.max.delay.ms (DefaultScheduledRebalanceMaxDelay)
	SyncTimeout           time.Duration // worker.sync.timeout.ms (3000)
	// Shared are the SharedKeys this worker sets, trimmed: the settings every worker of the
	// group must agree on, sent in the group metadata.
	Shared map[string]string
}

// SharedKeys are the worker settings that must be equal on all workers of one cluster: a worker
// that reads another config topic, or another converter, would run the group's connectors
// against other data. They travel in the group metadata, so they must never hold secrets; that
// is why converter sub-settings other than schemas.enable are left out (they may carry
// schema-registry credentials). Settings that may differ during a rolling change
// (connect.protocol, exactly.once.source.support) are left out too.
var SharedKeys = []string{
	"config.storage.topic",
	"offset.storage.topic",
	"status.storage.topic",
	"config.storage.replication.factor",
	"offset.storage.replication.factor",
	"status.storage.replication.factor",
	"offset.storage.partitions",
	"status.storage.partitions",
	"key.converter",
	"value.converter",
	"header.converter",
	"key.converter.schemas.enable",
	"value.converter.schemas.enable",
}

// clusterKeys are the group membership's keys, with Kafka Connect's defaults (but
// scheduled.rebalance.max.delay.ms).
var clusterKeys = []Key{
	{Name: "connect.protocol", Default: "sessioned", Doc: "eager, compatible or sessioned"},
	{Name: "session.timeout.ms", Default: "10000", Doc: "group session timeout"},
	{Name: "heartbeat.interval.ms", Default: "3000", Doc: "group heartbeat interval"},
	{Name: "rebalance.timeout.ms", Default: "60000", Doc: "how long a rebalance may take"},
	{Name: "scheduled.rebalance.max.delay.ms", Default: strconv.Itoa(int(DefaultScheduledRebalanceMaxDelay / time.Millisecond)), Doc: "how long a departed worker's work waits for it"},
	{Name: "worker.sync.timeout.ms", Default: "3000", Doc: "how long a worker may take to catch up with the config topic"},
	{Name: "worker.unsync.backoff.ms", Ignored: "a worker behind the config topic asks for another rebalance at once"},
}

func parseCluster(p *parser) Cluster {
	c := Cluster{
		Protocol:              strings.ToLower(p.str("connect.protocol")),
		SessionTimeout:        p.millis("session.timeout.ms"),
		HeartbeatInterval:     p.millis("heartbeat.interval.ms"),
		RebalanceTimeout:      p.millis("rebalance.timeout.ms"),
		ScheduledRebalanceMax: p.millis("scheduled.rebalance.max.delay.ms"),
		SyncTimeout:           p.millis("worker.sync.timeout.ms"),
		Shared:                map[string]string{},
	}
	switch c.Protocol {
	case "":
		c.Protocol = declared("connect.protocol")
	case "eager", "compatible", "sessioned":
	default:
		p.fail("connect.protocol", p.props["connect.protocol"], "must be eager, compatible or sessioned")
	}
	for _, k := range SharedKeys {
		if v, ok := p.raw(k); ok {
			c.Shared[k] = strings.TrimSpace(v)
		}
	}
	return c
}
