package rest

import (
	"context"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Herder is what the REST API needs from the worker: Kafka Connect's Herder seen from its resources.
// Errors are *connect.Error where the status code matters (404, 409, 400); anything else is a 500.
type Herder interface {
	// ServerInfo returns the body of GET /.
	ServerInfo(ctx context.Context) connect.ServerInfo

	// Connectors lists connector names, sorted.
	Connectors(ctx context.Context) ([]string, error)
	// ConnectorInfo returns a connector's config, tasks and type.
	ConnectorInfo(ctx context.Context, name string) (connect.ConnectorInfo, error)
	// ConnectorConfig returns the config exactly as submitted, with "name".
	ConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	// CreateConnector creates a connector; it fails with 409 if the name exists, 400 if the config is
	// invalid (Kafka's "Connector configuration is invalid and contains the following N error(s)..." text).
	CreateConnector(ctx context.Context, name string, config map[string]string, initial connect.TargetState) (connect.ConnectorInfo, error)
	// PutConnectorConfig creates or replaces a connector's config; created tells which.
	PutConnectorConfig(ctx context.Context, name string, config map[string]string) (info connect.ConnectorInfo, created bool, err error)
	// DeleteConnector removes a connector.
	DeleteConnector(ctx context.Context, name string) error
	// ConnectorStatus returns the connector's and its tasks' states.
	ConnectorStatus(ctx context.Context, name string) (connect.ConnectorStateInfo, error)
	// TaskConfigs returns the connector's task configs.
	TaskConfigs(ctx context.Context, name string) ([]connect.TaskInfo, error)
	// SetTargetState pauses, resumes (STARTED) or stops a connector.
	SetTargetState(ctx context.Context, name string, state connect.TargetState) error
	// RestartConnector restarts the connector instance (and, with includeTasks, its tasks; with
	// onlyFailed, only failed instances). It returns the status to answer 202 with, or nil for 204.
	// As in Kafka, the flags decide the answer: both false is 204 (the status is ignored); otherwise
	// 202 with the status, where instances due for restart show RESTARTING (a nil status is then
	// replaced by ConnectorStatus).
	RestartConnector(ctx context.Context, name string, includeTasks, onlyFailed bool) (*connect.ConnectorStateInfo, error)
	// RestartTask restarts one task.
	RestartTask(ctx context.Context, id connect.TaskID) error

	// Plugins lists the plugins of the given kinds loaded by this worker.
	Plugins(ctx context.Context, kinds ...wire.Kind) []connect.PluginInfo

	// PatchConnectorConfig applies a merge patch to a connector's config (PATCH
	// /connectors/{name}/config, KIP-477, Kafka 3.8): a key with a non-nil value is set, a key with a nil
	// value is removed, other keys keep their value. Kafka then validates and writes the result exactly
	// as PutConnectorConfig does (same 400 texts; forwarded to the leader) and answers the merged
	// ConnectorInfo. A connector that does not exist is a 404 "Connector x not found": PATCH never
	// creates. The server has already refused a patch that sets "name" to another name or removes it.
	PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (connect.ConnectorInfo, error)

	// ConnectorTopics returns the topics the connector has used since it was created or its topics
	// were last reset (KIP-558): the topics a source connector's records were written to, the topics a
	// sink connector consumed, as recorded in the status topic (keys "topic-<topic>-<connector>").
	// Sorted. Like Kafka, an unknown connector simply has none (no 404). The server answers 403 "Topic
	// tracking is disabled." itself when topic.tracking.enable=false (see WithTopicTracking).
	ConnectorTopics(ctx context.Context, name string) ([]string, error)
	// ResetConnectorTopics forgets those topics: Kafka writes a tombstone for each of the connector's
	// topic records to the status topic. Any worker may do it (no forwarding); answered 202. The server
	// answers 403 itself when tracking or reset is disabled.
	ResetConnectorTopics(ctx context.Context, name string) error
	// FenceZombies serves the internal PUT /connectors/{name}/fence (KIP-618), which a worker about
	// to start exactly-once source tasks sends to the leader: the leader fences the transactional
	// producers of the connector's previous generation of tasks and records the new task count.
	// Leader only (forwarded); 404 for an unknown connector, 400 for a sink. Answered 204.
	FenceZombies(ctx context.Context, name string) error

	// ConnectorOffsets returns a connector's committed offsets (GET /connectors/{name}/offsets, KIP-875),
	// in any state: for a source connector, every partition of its own in the offsets topic (the
	// worker's, or the connector's offsets.storage.topic) with the last offset committed; for a sink
	// connector, the committed offsets of its consumer group ("connect-<name>", or
	// consumer.override.group.id) in the sink form (connect.SinkOffset). 404 "Connector x not found".
	ConnectorOffsets(ctx context.Context, name string) (connect.ConnectorOffsets, error)
	// AlterConnectorOffsets writes the given offsets (PATCH /connectors/{name}/offsets, Kafka 3.6;
	// forwarded to the leader). offsets is never empty (the server answers 400 "Partitions / offsets
	// need to be provided for an alter offsets request" itself); an entry with a nil Offset resets that
	// partition. Kafka answers 404 "Connector x not found", then connect.NotStopped(name) (400) unless
	// the target state is STOPPED and the connector has no task configs left; sink offsets are checked
	// with connect.ParseSinkOffsets (400 texts) and written with the consumer group's alter/delete
	// offsets; source offsets are written (or tombstoned) to the offsets topic under the connector's
	// name (with an offsets.storage.topic, to that topic and to the worker's, as Kafka's
	// ConnectorOffsetBackingStore). It returns connect.OffsetsAlteredMessage, or connect.OffsetsAlteredFrameworkMessage when the
	// plugin did not say it handled the change itself.
	AlterConnectorOffsets(ctx context.Context, name string, offsets []connect.ConnectorOffset) (connect.Message, error)
	// ResetConnectorOffsets removes all of a connector's offsets (DELETE /connectors/{name}/offsets,
	// Kafka 3.6; forwarded to the leader): same 404 and 400 checks; for a sink Kafka deletes the
	// consumer group, for a source it tombstones every partition of the connector in the offsets
	// topic (in both topics, for a connector with an offsets.storage.topic). It returns connect.OffsetsResetMessage or connect.OffsetsResetFrameworkMessage.
	ResetConnectorOffsets(ctx context.Context, name string) (connect.Message, error)

	// PluginConfig returns a plugin's config definitions (GET /connector-plugins/{plugin}/config),
	// the plugin named by class name or alias as connector.class accepts it. For a connector, Kafka
	// lists the plugin's own keys first, then the framework's keys (SourceConnectorConfig or
	// SinkConnectorConfig: name, connector.class, tasks.max, key.converter, ..., errors.*) that the
	// plugin does not define; for a converter, its keys. 404 "Unknown plugin x." for a plugin this
	// worker does not have.
	PluginConfig(ctx context.Context, plugin string) ([]connect.ConfigKeyInfo, error)
	// ValidateConfig validates a connector config without creating anything (PUT
	// /connector-plugins/{plugin}/config/validate; run on this worker). cfg always holds
	// "connector.class", naming plugin (the server has answered Kafka's 400s otherwise), and may be
	// partial: AKHQ sends only connector.class and topics to get the definitions for its form. Kafka
	// answers ConfigInfos with 200 even when there are errors: Name is connector.class as given; Groups
	// lists the groups in order ("Common", "Transforms", "Predicates", "Error Handling", the source-only
	// "Topic Creation", "Exactly Once Support", "offsets.topic", then the plugin's); Configs has one
	// entry per defined key (framework and plugin, plus transforms.<alias>.* and predicates.<alias>.*
	// keys) with its value (the given one or the default; PASSWORD shown as "[hidden]") and errors,
	// and one entry with a nil Definition per undefined key that has errors; ErrorCount counts the
	// error messages (connect.ConfigInfos.CountErrors). An unknown class is a 400 in Kafka 4.
	ValidateConfig(ctx context.Context, plugin string, cfg map[string]string) (connect.ConfigInfos, error)

	// Loggers returns the loggers whose level has been set explicitly, and "root" (connect.RootLogger),
	// keyed by name (GET /admin/loggers).
	Loggers(ctx context.Context) (map[string]connect.LoggerLevel, error)
	// Logger returns one logger's level (GET /admin/loggers/{name}): its own if it was set, else its
	// effective level, inherited from its nearest ancestor. "root" (any case) is the root logger.
	// found=false is answered 404 "Logger x not found.".
	Logger(ctx context.Context, name string) (level connect.LoggerLevel, found bool, err error)
	// SetLogLevel sets the level of namespace and of every logger below it (PUT /admin/loggers/{name};
	// "root" sets every logger). level is one of connect.LogLevels, in upper case (the server has
	// answered 400 for a missing level and Kafka's 404 for an invalid one). With connect.ScopeWorker
	// it applies to this worker only and returns the names of the loggers changed, sorted (answered
	// 200). With connect.ScopeCluster (KIP-976, Kafka 3.7) Kafka writes "logger-cluster-<namespace>"
	// to the config topic, every worker applies it when it reads the record (and workers that start
	// later at startup), and the result is ignored (answered 204). LastModified is set to the time of
	// the change.
	SetLogLevel(ctx context.Context, namespace, level string, scope connect.LogScope) ([]string, error)

	// Workers answers GET /workers (a wasmconnect addition): the worker's group membership, why it
	// has no work if it has none, and on the leader every member with its URL, version and work.
	Workers(ctx context.Context) (connect.WorkersInfo, error)

	// connect.Health answers GET /health (KIP-1017); ctx carries a 10 s deadline. Its Status is connect.HealthHealthy
	// once startup is complete and the worker's main loop has answered, connect.HealthStarting while the
	// worker is still starting (joining the group, reading the config topic), and connect.HealthUnhealthy if
	// the loop did not answer before ctx ended. A connect.Health that does not return by the deadline is
	// answered as unhealthy.
	Health(ctx context.Context) connect.Health
}
