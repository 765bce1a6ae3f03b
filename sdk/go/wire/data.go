package wire

// Tag says how a Data value is represented on the wire (sdk/ABI.md §5.1).
type Tag uint8

const (
	// TagNull is an absent value (a Kafka null, a tombstone).
	TagNull Tag = 0
	// TagBytes is raw bytes with an optional bytes schema.
	TagBytes Tag = 1
	// TagString is UTF-8 text with an optional string schema.
	TagString Tag = 2
	// TagJSON is a Connect value as JSON with an optional Connect schema as JsonConverter writes it.
	TagJSON Tag = 3
)

// Data is one key, value or header value in Connect's data model.
//
// Bytes holds the raw bytes for TagBytes, the UTF-8 text for TagString and the JSON payload for
// TagJSON; Schema is only used by TagJSON (nil means schemaless).
type Data struct {
	Tag    Tag
	Schema []byte
	Bytes  []byte
}

// Null returns the null value.
func Null() Data { return Data{} }

// String returns a text value.
func String(s string) Data { return Data{Tag: TagString, Bytes: []byte(s)} }

// Bytes returns a raw bytes value.
func Bytes(b []byte) Data { return Data{Tag: TagBytes, Bytes: b} }

// JSON returns a value given as a JSON payload with an optional schema (nil = schemaless).
func JSON(schema, payload []byte) Data { return Data{Tag: TagJSON, Schema: schema, Bytes: payload} }

// IsNull reports whether d is the null value.
func (d Data) IsNull() bool { return d.Tag == TagNull }

// Header is one record header.
type Header struct {
	Key   string
	Value Data
}

// Record is a source or sink record as it crosses the ABI (sdk/ABI.md §5.2).
type Record struct {
	Topic     string
	Partition int32 // -1: let the producer choose
	Offset    int64 // Kafka offset of a sink record; -1 for source records
	Timestamp int64 // ms since the epoch; -1: none
	Key       Data
	Value     Data
	Headers   []Header

	// SourcePartition and SourceOffset are JSON objects set by source connectors; empty otherwise.
	SourcePartition []byte
	SourceOffset    []byte
}

// TopicData is one element of a data batch (sdk/ABI.md §5.3).
type TopicData struct {
	Topic string
	Value Data
}

// TopicBytes is one element of a bytes batch with topics (sdk/ABI.md §5.5); a nil Bytes is a null.
type TopicBytes struct {
	Topic string
	Bytes []byte
}
