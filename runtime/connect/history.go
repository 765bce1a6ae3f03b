package connect

import "time"

// StateChange is one element of GET /state-changes (a wasmconnect addition): a connector or task
// that changed state, as its worker wrote it to the status topic. Task is nil for the connector
// itself. State DESTROYED means the status was removed (the connector was deleted, or the task is
// no longer part of it).
type StateChange struct {
	Time       time.Time `json:"time"`
	Connector  string    `json:"connector"`
	Task       *int      `json:"task,omitempty"`
	State      State     `json:"state"`
	WorkerID   string    `json:"worker_id,omitempty"`
	Generation int32     `json:"generation"`
	Trace      string    `json:"trace,omitempty"`
}

// Session is the body of GET /session (a wasmconnect addition): who the request's credentials
// name and what they may do, so that a client such as the web console can offer only the actions
// that would succeed. Without authentication on the worker everyone may change everything.
type Session struct {
	// Auth is true when the worker authenticates requests.
	Auth bool `json:"auth"`
	// User is the authenticated user; empty for an anonymous reader or without Auth.
	User string `json:"user,omitempty"`
	// Role is "admin" or "read".
	Role string `json:"role"`
	// MayChange is true when POST, PUT, PATCH and DELETE requests would be allowed.
	MayChange bool `json:"may_change"`
}
