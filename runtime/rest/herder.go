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

	// Health answers GET /health (KIP-1017); ctx carries a 10 s deadline. It returns HealthHealthy once
	// startup is complete and the worker's main loop has answered, HealthStarting while the worker is
	// still starting (joining the group, reading the config topic), and HealthUnhealthy if the loop did
	// not answer before ctx ended. detail, if not empty, says what the worker is doing, e.g. "The worker
	// is currently reading to the end of the config topic."; it is appended to the message. A Health that
	// does not return by the deadline is answered as unhealthy.
	Health(ctx context.Context) (status HealthStatus, detail string)
}

// HealthStatus is the "status" of GET /health.
type HealthStatus string

const (
	HealthHealthy   HealthStatus = "healthy"   // 200
	HealthStarting  HealthStatus = "starting"  // 503
	HealthUnhealthy HealthStatus = "unhealthy" // 500
)
