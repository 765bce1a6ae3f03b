package herder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/worker"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// The REST requests added with Kafka Connect's later KIPs: PATCH config (KIP-477), active topics
// (KIP-558), offsets (KIP-875), plugin config and validation.

// PatchConnectorConfig merges patch into a connector's config (a nil value removes the key) and
// writes the result as PutConnectorConfig does, with the same validation. It never creates.
func (h *Herder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (connect.ConnectorInfo, error) {
	_, current, err := h.config(name)
	if err != nil {
		return connect.ConnectorInfo{}, err
	}
	merged := maps.Clone(current)
	for k, v := range patch {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = *v
		}
	}
	// forwarded to the leader in cluster mode: PutConnectorConfig forwards the request as it came (this
	// PATCH), and the leader merges the patch into its own view of the config.
	info, _, err := h.PutConnectorConfig(ctx, name, merged)
	return info, err
}

// ConnectorTopics returns the topics recorded for a connector in the status topic, sorted; an
// unknown connector has none.
func (h *Herder) ConnectorTopics(_ context.Context, name string) ([]string, error) {
	topics := []string{}
	for _, ts := range h.cfg.Statuses.Topics(name) {
		if !slices.Contains(topics, ts.Topic) {
			topics = append(topics, ts.Topic)
		}
	}
	slices.Sort(topics)
	return topics, nil
}

// ResetConnectorTopics tombstones a connector's topic records. Any worker may do it.
func (h *Herder) ResetConnectorTopics(ctx context.Context, name string) error {
	return h.cfg.Statuses.ResetTopics(ctx, name)
}

// ConnectorOffsets returns a connector's committed offsets, in any state: a source connector's
// from the offsets topic (read to its end first, as Kafka starts a fresh offset store), a sink
// connector's from its consumer group.
func (h *Herder) ConnectorOffsets(ctx context.Context, name string) (connect.ConnectorOffsets, error) {
	_, cfg, err := h.config(name)
	if err != nil {
		return connect.ConnectorOffsets{}, err
	}
	typ, err := h.connectorType(name, cfg)
	if err != nil {
		return connect.ConnectorOffsets{}, err
	}
	out := connect.ConnectorOffsets{Offsets: []connect.ConnectorOffset{}}
	if typ == connect.TypeSink {
		group := worker.SinkGroupID(name, cfg)
		committed, err := h.cfg.Admin.FetchOffsets(ctx, group)
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return connect.ConnectorOffsets{}, fmt.Errorf("Failed to retrieve consumer group offsets for sink connector %s: %w", name, err)
		}
		for _, o := range committed.Sorted() {
			if o.Err == nil && o.At >= 0 {
				out.Offsets = append(out.Offsets, connect.SinkOffset(connect.TopicPartition{Topic: o.Topic, Partition: o.Partition}, o.At))
			}
		}
		return out, nil
	}
	offs, done, err := h.sourceOffsets(ctx, name, cfg, "retrieve")
	if err != nil {
		return connect.ConnectorOffsets{}, err
	}
	defer done()
	for _, e := range offs.Offsets(name) {
		partition, err1 := decodeObject(e.Partition)
		offset, err2 := decodeObject(e.Offset)
		if err := errors.Join(err1, err2); err != nil || offset == nil {
			h.log.Warn("skipping an offset that is not a JSON object", "connector", name, "partition", string(e.Partition), "err", err)
			continue
		}
		out.Offsets = append(out.Offsets, connect.ConnectorOffset{Partition: partition, Offset: offset})
	}
	return out, nil
}

// sourceOffsets opens a source connector's offsets store, read to its end as Kafka starts a fresh
// one for each request: the worker's offsets topic, or the connector's offsets.storage.topic with
// the worker's as its fallback. verb names the request in errors.
func (h *Herder) sourceOffsets(ctx context.Context, name string, cfg map[string]string, verb string) (store.OffsetBackingStore, func(), error) {
	offs, done, err := h.cfg.Worker.OffsetStore(ctx, cfg)
	if err == nil {
		if err = offs.ReadToEnd(ctx); err != nil {
			done()
			err = fmt.Errorf("reading the offsets topic: %w", err)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("Failed to %s offsets for source connector %s: %w", verb, name, err)
	}
	return offs, done, nil
}

// connectorType resolves a stored connector's type; a connector whose plugin this worker does not
// have cannot have its offsets read or changed here (Kafka fails such requests with a 500 too).
func (h *Herder) connectorType(name string, cfg map[string]string) (connect.ConnectorType, error) {
	_, typ, err := h.cfg.Worker.ResolveConnector(cfg)
	if err != nil {
		return typ, &connect.Error{Code: http.StatusInternalServerError,
			Message: fmt.Sprintf("Failed to determine the type of connector %s: %v", name, err)}
	}
	return typ, nil
}

// decodeObject decodes a JSON object keeping numbers exact (json.Number); null is nil.
func decodeObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	err := dec.Decode(&m)
	return m, err
}

// modifiable applies Kafka's checks before offsets are changed: the connector exists (404), its
// target state is STOPPED and it has no task configs left (400). After the checks, as Kafka does,
// it forwards the request to the leader.
func (h *Herder) modifiable(ctx context.Context, name string) (map[string]string, connect.ConnectorType, error) {
	snap, cfg, err := h.config(name)
	if err != nil {
		return nil, connect.TypeUnknown, err
	}
	if targetOf(snap, name) != connect.TargetStopped || len(snap.Tasks[name]) != 0 {
		return nil, connect.TypeUnknown, connect.NotStopped(name)
	}
	typ, err := h.connectorType(name, cfg)
	if err != nil {
		return nil, connect.TypeUnknown, err
	}
	if err := h.requireLeader(ctx); err != nil {
		return nil, connect.TypeUnknown, err
	}
	return cfg, typ, nil
}

// AlterConnectorOffsets writes offsets for a stopped connector: a sink's consumer group offsets
// are committed (or deleted, for a nil offset), a source's offsets written (or tombstoned) to the
// offsets topic. Plugins cannot manage offsets of their own in ABI v1, so the answer is always the
// framework-managed message.
func (h *Herder) AlterConnectorOffsets(ctx context.Context, name string, offsets []connect.ConnectorOffset) (connect.Message, error) {
	cfg, typ, err := h.modifiable(ctx, name)
	if err != nil {
		return connect.Message{}, err
	}
	if typ == connect.TypeSink {
		parsed, err := connect.ParseSinkOffsets(offsets)
		if err != nil {
			return connect.Message{}, err
		}
		if err := h.alterSinkOffsets(ctx, name, worker.SinkGroupID(name, cfg), parsed); err != nil {
			return connect.Message{}, err
		}
		return connect.Message{Message: connect.OffsetsAlteredFrameworkMessage}, nil
	}
	entries := make([]store.OffsetEntry, 0, len(offsets))
	for _, o := range offsets {
		e, err := sourceOffsetEntry(o)
		if err != nil {
			return connect.Message{}, err
		}
		entries = append(entries, e)
	}
	offs, done, err := h.sourceOffsets(ctx, name, cfg, "alter")
	if err != nil {
		return connect.Message{}, err
	}
	defer done()
	if err := offs.Put(ctx, name, entries); err != nil {
		return connect.Message{}, fmt.Errorf("Failed to alter offsets for source connector %s: %w", name, err)
	}
	return connect.Message{Message: connect.OffsetsAlteredFrameworkMessage}, nil
}

// sourceOffsetEntry checks one source offset of a PATCH as Kafka's OffsetUtils.validateFormat
// does (string keys, primitive values) and encodes it for the offset store.
func sourceOffsetEntry(o connect.ConnectorOffset) (store.OffsetEntry, error) {
	if o.Partition == nil {
		return store.OffsetEntry{}, connect.BadRequest("Source partitions may not be null")
	}
	for _, m := range []map[string]any{o.Partition, o.Offset} {
		for k, v := range m {
			switch v.(type) {
			case map[string]any:
				return store.OffsetEntry{}, connect.BadRequest("Offsets may only contain primitive types as values, but field %s contains MAP", k)
			case []any:
				return store.OffsetEntry{}, connect.BadRequest("Offsets may only contain primitive types as values, but field %s contains ARRAY", k)
			}
		}
	}
	p, err := json.Marshal(o.Partition)
	if err != nil {
		return store.OffsetEntry{}, connect.BadRequest("Invalid source partition: %v", err)
	}
	e := store.OffsetEntry{Partition: p}
	if o.Offset != nil {
		if e.Offset, err = json.Marshal(o.Offset); err != nil {
			return store.OffsetEntry{}, connect.BadRequest("Invalid source offset: %v", err)
		}
	}
	return e, nil
}

// zombieSinkMessage is Kafka's answer when the group still has members: tasks that have not
// stopped yet, or a connector resumed meanwhile.
func zombieSinkMessage(verb, name string) error {
	return &connect.Error{Code: http.StatusInternalServerError, Message: fmt.Sprintf("Failed to %s consumer group offsets for connector %s either because its tasks "+
		"haven't stopped completely yet or the connector was resumed before the request to %s its offsets could be successfully "+
		"completed. If the connector is in a stopped state, this operation can be safely retried. If it doesn't eventually succeed, the "+
		"Connect cluster may need to be restarted to get rid of the zombie sink tasks.", verb, name, verb)}
}

// alterSinkOffsets commits the given offsets of a sink's consumer group and deletes those set to
// nil, as Kafka's alterConsumerGroupOffsets and deleteConsumerGroupOffsets.
func (h *Herder) alterSinkOffsets(ctx context.Context, name, group string, offsets map[connect.TopicPartition]*int64) error {
	commit := kadm.Offsets{}
	reset := kadm.TopicsSet{}
	for tp, off := range offsets {
		if off == nil {
			reset.Add(tp.Topic, tp.Partition)
		} else {
			commit.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: *off, LeaderEpoch: -1})
		}
	}
	failed := func(err error) error {
		if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.GroupSubscribedToTopic) ||
			errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.RebalanceInProgress) {
			return zombieSinkMessage("alter", name)
		}
		return fmt.Errorf("Failed to alter consumer group offsets for connector %s: %w", name, err)
	}
	if len(commit) > 0 {
		resp, err := h.cfg.Admin.CommitOffsets(ctx, group, commit)
		if err == nil {
			err = resp.Error()
		}
		if err != nil {
			return failed(err)
		}
	}
	if len(reset) > 0 {
		resp, err := h.cfg.Admin.DeleteOffsets(ctx, group, reset)
		if err == nil {
			err = resp.Error()
		}
		// Deleting the offsets of a group that has none, or does not exist, leaves nothing to reset.
		if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return failed(err)
		}
	}
	return nil
}

// ResetConnectorOffsets removes all of a stopped connector's offsets: a sink's consumer group is
// deleted, a source's partitions are tombstoned in the offsets topic.
func (h *Herder) ResetConnectorOffsets(ctx context.Context, name string) (connect.Message, error) {
	cfg, typ, err := h.modifiable(ctx, name)
	if err != nil {
		return connect.Message{}, err
	}
	if typ == connect.TypeSink {
		_, err := h.cfg.Admin.DeleteGroup(ctx, worker.SinkGroupID(name, cfg))
		switch {
		case err == nil || errors.Is(err, kerr.GroupIDNotFound):
			// Resetting is idempotent: a group already deleted has no offsets.
		case errors.Is(err, kerr.NonEmptyGroup):
			return connect.Message{}, zombieSinkMessage("reset", name)
		default:
			return connect.Message{}, fmt.Errorf("Failed to reset consumer group offsets for connector %s: %w", name, err)
		}
		return connect.Message{Message: connect.OffsetsResetFrameworkMessage}, nil
	}
	offs, done, err := h.sourceOffsets(ctx, name, cfg, "reset")
	if err != nil {
		return connect.Message{}, err
	}
	defer done()
	// A connector with an offsets topic of its own has its partitions in both topics (Kafka's
	// connectorPartitions is their union), and its store tombstones each in both.
	var tombstones []store.OffsetEntry
	for _, e := range offs.Offsets(name) {
		tombstones = append(tombstones, store.OffsetEntry{Partition: e.Partition})
	}
	if len(tombstones) > 0 {
		if err := offs.Put(ctx, name, tombstones); err != nil {
			return connect.Message{}, fmt.Errorf("Failed to reset offsets for source connector %s: %w", name, err)
		}
	}
	return connect.Message{Message: connect.OffsetsResetFrameworkMessage}, nil
}

// PluginConfig returns a plugin's config definitions: for a connector, its own keys, then the
// framework's keys it does not define itself; for any other plugin, its own keys.
func (h *Herder) PluginConfig(_ context.Context, plugin string) ([]connect.ConfigKeyInfo, error) {
	p, err := h.cfg.Worker.Host().Resolve(plugin, "")
	if err != nil {
		return nil, connect.NotFound("Unknown plugin %s.", plugin)
	}
	out := make([]connect.ConfigKeyInfo, 0, len(p.Config))
	for _, k := range p.Config {
		out = append(out, connect.ConfigKeyInfo(k))
	}
	var typ connect.ConnectorType
	switch p.Kind {
	case wire.KindSource:
		typ = connect.TypeSource
	case wire.KindSink:
		typ = connect.TypeSink
	default:
		return out, nil
	}
	for _, k := range h.cfg.Worker.FrameworkConfig(typ) {
		if !slices.ContainsFunc(out, func(o connect.ConfigKeyInfo) bool { return o.Name == k.Name }) {
			out = append(out, k)
		}
	}
	return out, nil
}

// ValidateConfig validates a connector config on this worker without writing anything.
func (h *Herder) ValidateConfig(ctx context.Context, _ string, cfg map[string]string) (connect.ConfigInfos, error) {
	infos, _, err := h.cfg.Worker.ValidateConfig(ctx, cfg)
	return infos, err
}
