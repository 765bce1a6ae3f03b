package connect

import (
	"fmt"
	"strings"
)

// State is a connector's or task's reported state, as written to the status topic and shown by
// GET /connectors/{name}/status.
type State string

const (
	StateUnassigned State = "UNASSIGNED"
	StateRunning    State = "RUNNING"
	StatePaused     State = "PAUSED"
	StateStopped    State = "STOPPED" // connectors only
	StateFailed     State = "FAILED"
	StateRestarting State = "RESTARTING"
)

// TargetState is the state a user asked for, stored in the config topic.
type TargetState string

const (
	TargetStarted TargetState = "STARTED"
	TargetPaused  TargetState = "PAUSED"
	TargetStopped TargetState = "STOPPED"
)

// ParseInitialState parses the initial_state of POST /connectors (case-insensitive, KIP-980).
// "" means RUNNING.
func ParseInitialState(s string) (TargetState, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "RUNNING", "STARTED":
		return TargetStarted, nil
	case "PAUSED":
		return TargetPaused, nil
	case "STOPPED":
		return TargetStopped, nil
	}
	return "", BadRequest("Invalid initial state %q: must be one of RUNNING, PAUSED or STOPPED", s)
}

// ConnectorType is "source", "sink" or "unknown".
type ConnectorType string

const (
	TypeSource  ConnectorType = "source"
	TypeSink    ConnectorType = "sink"
	TypeUnknown ConnectorType = "unknown"
)

// TaskID names one task of a connector.
type TaskID struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

// String returns Kafka's "<connector>-<task>" form.
func (id TaskID) String() string { return fmt.Sprintf("%s-%d", id.Connector, id.Task) }
