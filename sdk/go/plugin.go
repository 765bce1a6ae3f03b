package sdk

import (
	"errors"
	"fmt"

	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// Info describes a plugin in the module's descriptor.
type Info struct {
	// Name is the short name users may write (FileStreamSource); required.
	Name string
	// Class is the fully qualified class name (org.apache.kafka.connect.file.FileStreamSourceConnector);
	// empty means Name.
	Class string
	// Aliases are more accepted names.
	Aliases []string
	// Version is the plugin's version; empty means "undefined", as Kafka reports an unknown version.
	Version string
	// Config defines the plugin's settings.
	Config []ConfigDef
}

// SourceConnector is the connector side of a source plugin: it validates a config and splits it into
// task configs. It holds no per-connector state; the SDK passes the config to every method.
type SourceConnector interface {
	// Validate returns error messages per config key (nil or empty when valid). The SDK has already
	// checked required keys, types and Validators of the ConfigDefs, and filled in defaults.
	Validate(cfg Config) map[string][]string
	// TaskConfigs returns at most maxTasks task configs.
	TaskConfigs(cfg Config, maxTasks int) ([]Config, error)
	// NewTask returns a new, unstarted task.
	NewTask() SourceTask
}

// SourceTask reads records from an external system.
type SourceTask interface {
	// Start starts the task with its task config. Read the stored position with ctx.Offset here.
	Start(ctx *TaskContext, cfg Config) error
	// Poll returns the next records. It must not block: return an empty batch when there is nothing
	// new, and the host calls again later. The SDK encodes the records before it calls Poll again,
	// so a task may reuse the slice and the buffers its records point into.
	Poll() ([]SourceRecord, error)
	// Commit is called after the records polled so far have been written and their offsets stored.
	Commit() error
	// Stop releases the task's resources.
	Stop() error
}

// OffsetCommitter is a SourceTask that must know which of its offsets the host has stored, to
// acknowledge them upstream only then (a database's replication slot, a queue's ack): a task
// that implements it has CommitOffsets called instead of Commit, with the offset just stored per
// source partition (none when the host stored no offset since the last commit). An offset the
// host stored is the last one of its partition whose record, and every record polled before it,
// Kafka has acknowledged, so records polled after it may still be in flight.
type OffsetCommitter interface {
	CommitOffsets(committed []CommittedOffset) error
}

// CommittedOffset is a source partition and the offset the host stored for it, decoded as
// TaskContext.Offset decodes a stored offset.
type CommittedOffset struct {
	Partition map[string]any
	Offset    map[string]any
}

// SinkConnector is the connector side of a sink plugin.
type SinkConnector interface {
	Validate(cfg Config) map[string][]string
	TaskConfigs(cfg Config, maxTasks int) ([]Config, error)
	NewTask() SinkTask
}

// SinkTask writes records to an external system.
type SinkTask interface {
	Start(ctx *TaskContext, cfg Config) error
	// Put receives a batch of records. It may buffer them; Flush must make them durable.
	Put(records []SinkRecord) error
	// Flush makes everything put so far durable; offsets are the next offsets to read per partition.
	Flush(offsets []TopicPartitionOffset) error
	Stop() error
}

// Converter converts between Connect data and the bytes stored in Kafka (key.converter,
// value.converter). A nil []byte is a Kafka null. The SDK copies what FromConnect and ToConnect
// return before it calls the converter again, so a converter may reuse one output buffer.
type Converter interface {
	// Configure receives the converter's settings (prefix removed, defaults filled in, including
	// converter.type) and whether it converts keys.
	Configure(cfg Config, isKey bool) error
	FromConnect(topic string, v Data) ([]byte, error)
	ToConnect(topic string, b []byte) (Data, error)
}

// RegisterSource registers a source plugin. Call it from an init function.
func RegisterSource(info Info, c SourceConnector) {
	defaultDispatcher.register(&plugin{info: info, kind: wire.KindSource, source: c})
}

// RegisterSink registers a sink plugin. Call it from an init function.
func RegisterSink(info Info, c SinkConnector) {
	defaultDispatcher.register(&plugin{info: info, kind: wire.KindSink, sink: c})
}

// RegisterConverter registers a converter; newConverter is called once per converter the host opens.
// Call it from an init function.
func RegisterConverter(info Info, newConverter func() Converter) {
	defaultDispatcher.register(&plugin{info: info, kind: wire.KindConverter, newConverter: newConverter})
}

// Split divides items into at most n groups of contiguous items whose sizes differ by at most one, like
// Kafka's ConnectorUtils.groupPartitions. It returns min(n, len(items)) groups.
func Split[T any](items []T, n int) [][]T {
	if n <= 0 {
		panic(fmt.Sprintf("sdk.Split: number of groups must be positive, got %d", n))
	}
	n = min(n, len(items))
	groups := make([][]T, 0, n)
	per, extra := 0, 0
	if n > 0 {
		per, extra = len(items)/n, len(items)%n
	}
	start := 0
	for i := range n {
		size := per
		if i < extra {
			size++
		}
		groups = append(groups, items[start:start+size:start+size])
		start += size
	}
	return groups
}

type plugin struct {
	info              Info
	kind              wire.Kind
	source            SourceConnector
	sink              SinkConnector
	newConverter      func() Converter
	newTransformation func() Transformation
	newPredicate      func() Predicate
}

func (p *plugin) class() string {
	if p.info.Class != "" {
		return p.info.Class
	}
	return p.info.Name
}

func (p *plugin) descriptor() wire.PluginDescriptor {
	d := wire.PluginDescriptor{
		Name:    p.info.Name,
		Class:   p.class(),
		Aliases: p.info.Aliases,
		Kind:    p.kind,
		Version: p.info.Version,
		Config:  make([]wire.ConfigKey, len(p.info.Config)),
	}
	if d.Version == "" {
		d.Version = "undefined"
	}
	for i := range p.info.Config {
		d.Config[i] = p.info.Config[i].key()
	}
	return d
}

func (p *plugin) validate(cfg Config) map[string][]string {
	switch p.kind {
	case wire.KindSource:
		return p.source.Validate(cfg)
	case wire.KindSink:
		return p.sink.Validate(cfg)
	case wire.KindTransformation:
		return configureErrors(p.newTransformation().Configure(cfg))
	case wire.KindPredicate:
		return configureErrors(p.newPredicate().Configure(cfg))
	}
	return nil
}

// configureErrors turns the error of a trial Configure into VALIDATE's per-key errors: under the key
// an InvalidConfig error names, else under "" (the plugin's config as a whole).
func configureErrors(err error) map[string][]string {
	if err == nil {
		return nil
	}
	var ce *configdef.Error
	if errors.As(err, &ce) {
		return map[string][]string{ce.Key: {ce.Msg}}
	}
	return map[string][]string{"": {err.Error()}}
}

func (p *plugin) taskConfigs(cfg Config, maxTasks int) ([]Config, error) {
	switch p.kind {
	case wire.KindSource:
		return p.source.TaskConfigs(cfg, maxTasks)
	case wire.KindSink:
		return p.sink.TaskConfigs(cfg, maxTasks)
	}
	return nil, fmt.Errorf("%s is a %s, not a connector", p.info.Name, p.kind)
}
