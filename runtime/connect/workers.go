package connect

// WorkersInfo is the body of GET /workers (a wasmconnect addition): this worker's place in its
// Connect group, and, on the leader, every member with its URL, version and assigned work. It is
// where a worker that could not join says why (Error), for instance a setting that differs from the
// group's.
type WorkersInfo struct {
	WorkerID   string         `json:"worker_id"`
	GroupID    string         `json:"group_id,omitempty"`
	MemberID   string         `json:"member_id,omitempty"`
	Generation int32          `json:"generation"`
	Leader     bool           `json:"leader"`
	LeaderURL  string         `json:"leader_url,omitempty"`
	Assignment WorkAssignment `json:"assignment"`
	Error      string         `json:"error,omitempty"`
	// Workers lists the group's members as the leader assigned them; only the leader knows them.
	Workers []WorkerInfo `json:"workers,omitempty"`
}

// WorkerInfo is one member of a Connect group.
type WorkerInfo struct {
	URL          string         `json:"url"`
	MemberID     string         `json:"member_id"`
	Version      string         `json:"version,omitempty"` // empty for Java workers
	ConfigOffset int64          `json:"config_offset"`
	Assignment   WorkAssignment `json:"assignment"`
	Refused      string         `json:"refused,omitempty"` // why the leader refused it
}

// WorkAssignment is the work assigned to one worker.
type WorkAssignment struct {
	Connectors []string `json:"connectors"`
	Tasks      []TaskID `json:"tasks"`
}
