package wire

// Version is the ABI version this package implements (sdk/ABI.md §6).
const Version = 1

// Op is an operation passed to the guest's wc_call export (sdk/ABI.md §4).
type Op int32

const (
	OpOpen        Op = 1
	OpClose       Op = 2
	OpValidate    Op = 3
	OpTaskConfigs Op = 4
	OpPoll        Op = 5
	OpCommit      Op = 6
	OpPut         Op = 7
	OpFlush       Op = 8
	OpFromConnect Op = 9
	OpToConnect   Op = 10
)

// String returns the op's name as sdk/ABI.md writes it.
func (o Op) String() string {
	switch o {
	case OpOpen:
		return "OPEN"
	case OpClose:
		return "CLOSE"
	case OpValidate:
		return "VALIDATE"
	case OpTaskConfigs:
		return "TASK_CONFIGS"
	case OpPoll:
		return "POLL"
	case OpCommit:
		return "COMMIT"
	case OpPut:
		return "PUT"
	case OpFlush:
		return "FLUSH"
	case OpFromConnect:
		return "FROM_CONNECT"
	case OpToConnect:
		return "TO_CONNECT"
	case OpTransform:
		return "TRANSFORM"
	case OpTest:
		return "TEST"
	case OpTransformChain:
		return "TRANSFORM_CHAIN"
	case OpTransformConvert:
		return "TRANSFORM_CONVERT"
	}
	return "UNKNOWN"
}

// Result bits of the i64 returned by wc_call and wc_describe (sdk/ABI.md §2).
const (
	ResultError     = 1 << 31 // the buffer holds an error message
	ResultRetriable = 1 << 30 // with ResultError: the call may be retried
	resultLenMask   = 1<<30 - 1
)

// MaxResultLen is the largest buffer a result can describe.
const MaxResultLen = resultLenMask

// PackResult packs a guest buffer and flags into a wc_call result.
func PackResult(ptr, length uint32, flags uint32) uint64 {
	return uint64(ptr)<<32 | uint64(length&resultLenMask|flags)
}

// UnpackResult splits a wc_call result into its buffer and flags.
func UnpackResult(r uint64) (ptr, length uint32, isErr, retriable bool) {
	lo := uint32(r)
	return uint32(r >> 32), lo & resultLenMask, lo&ResultError != 0, lo&ResultRetriable != 0
}

// Kind is a plugin kind as the descriptor names it.
type Kind string

const (
	KindSource    Kind = "source"
	KindSink      Kind = "sink"
	KindConverter Kind = "converter"
)

// Role says what an OPEN creates.
type Role string

const (
	RoleConnector Role = "connector"
	RoleTask      Role = "task"
	RoleConverter Role = "converter"
)

// Descriptor is the JSON returned by wc_describe (sdk/ABI.md §3).
type Descriptor struct {
	ABI     int                `json:"abi"`
	Plugins []PluginDescriptor `json:"plugins"`
	// TransformChain says the module runs TRANSFORM_CHAIN (sdk/ABI.md §4).
	TransformChain bool `json:"transform_chain,omitempty"`
	// TransformConvert says the module runs TRANSFORM_CONVERT (sdk/ABI.md §5.9): a chain of its
	// transformations followed by two of its converters.
	TransformConvert bool `json:"transform_convert,omitempty"`
}

// PluginDescriptor describes one plugin of a module.
type PluginDescriptor struct {
	Name    string      `json:"name"`
	Class   string      `json:"class"`
	Aliases []string    `json:"aliases,omitempty"`
	Kind    Kind        `json:"kind"`
	Version string      `json:"version"`
	Config  []ConfigKey `json:"config"`
}

// ConfigKey is a config definition in the shape of Kafka Connect's ConfigKeyInfo.
type ConfigKey struct {
	Name          string   `json:"name"`
	Type          string   `json:"type"` // STRING, INT, SHORT, LONG, DOUBLE, BOOLEAN, LIST, CLASS, PASSWORD
	Required      bool     `json:"required"`
	DefaultValue  *string  `json:"default_value"`
	Importance    string   `json:"importance"` // HIGH, MEDIUM, LOW
	Documentation string   `json:"documentation"`
	Group         *string  `json:"group"`
	Order         int      `json:"order"`
	Width         string   `json:"width"`
	DisplayName   string   `json:"display_name"`
	Dependents    []string `json:"dependents"`
}

// OpenRequest is the input of OPEN.
type OpenRequest struct {
	Plugin  string            `json:"plugin"`
	Role    Role              `json:"role"`
	Config  map[string]string `json:"config"`
	Context OpenContext       `json:"context"`
}

// OpenContext tells a plugin object where it runs.
type OpenContext struct {
	Connector string   `json:"connector"`
	Task      int      `json:"task"`
	FSAllow   []string `json:"fs_allow"`
}

// OpenResponse is the result of OPEN.
type OpenResponse struct {
	Handle int32 `json:"handle"`
}

// ValidateRequest is the input of VALIDATE.
type ValidateRequest struct {
	Plugin string            `json:"plugin"`
	Config map[string]string `json:"config"`
}

// ValidateResponse is the result of VALIDATE: error messages per config key.
type ValidateResponse struct {
	Errors map[string][]string `json:"errors"`
}

// TaskConfigsRequest is the input of TASK_CONFIGS.
type TaskConfigsRequest struct {
	MaxTasks int `json:"max_tasks"`
}

// TopicPartitionOffset is one element of FLUSH's input: the next offset to read in a partition.
type TopicPartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}
