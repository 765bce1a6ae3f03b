package connect

// Health is a worker's health, as GET /health answers it.
type Health struct {
	Status HealthStatus
	// Detail, if not empty, says in a sentence what the worker is doing, e.g. "The worker is joining
	// its group."; it is appended to the message. Anyone may read it (GET /health is open to
	// liveness probes), so it names no member, host or raw error: those go in Checks.
	Detail string
	// Checks are the internals behind Status: the group membership, the config topic, the main
	// loop. The server shows them only to clients that may read the rest of the API (the REST
	// server's WithAuth), because they name members and carry raw errors.
	Checks []HealthCheck
}

// HealthCheck is one part of a worker's health.
type HealthCheck struct {
	Name   string      `json:"name"` // "group", "config topic", "main loop"
	Status CheckStatus `json:"status"`
	Detail string      `json:"detail,omitempty"`
	// Problems lists what is wrong, one line each, e.g. the config records that were skipped.
	Problems []string `json:"problems,omitempty"`
}

// CheckStatus is the "status" of a HealthCheck.
type CheckStatus string

const (
	CheckOK      CheckStatus = "ok"
	CheckWarning CheckStatus = "warning" // the worker works, but something needs an operator
	CheckFailed  CheckStatus = "failed"
)

// HealthStatus is the "status" of GET /health.
type HealthStatus string

const (
	HealthHealthy   HealthStatus = "healthy"   // 200
	HealthStarting  HealthStatus = "starting"  // 503
	HealthUnhealthy HealthStatus = "unhealthy" // 500
)
