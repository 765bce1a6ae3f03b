package task

import (
	"context"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// SourcePlugin is the plugin side of a source task.
type SourcePlugin interface {
	Poll(ctx context.Context) ([]wire.Record, error)
	// Commit tells the plugin that offsets were stored: committed holds, per source partition
	// (JSON), the offset (JSON) just stored, which a plugin acknowledges upstream (a replication
	// slot's confirmed position) only now.
	Commit(ctx context.Context, committed map[string][]byte) error
}

// SinkPlugin is the plugin side of a sink task.
type SinkPlugin interface {
	Put(ctx context.Context, records []wire.Record) error
	Flush(ctx context.Context, offsets []wire.TopicPartitionOffset) error
}

// Converter converts keys or values between Connect data and bytes.
type Converter interface {
	FromConnect(ctx context.Context, values []wire.TopicData) ([][]byte, error)
	ToConnect(ctx context.Context, values []wire.TopicBytes) ([]wire.Data, error)
}

// OffsetWriter stores source offsets: partition JSON -> offset JSON, for one connector.
type OffsetWriter interface {
	WriteOffsets(ctx context.Context, connector string, offsets map[string][]byte) error
}

// StateFunc is told each state a task enters; trace explains a FAILED state.
type StateFunc func(state connect.State, trace string)
