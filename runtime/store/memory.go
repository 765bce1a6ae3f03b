package store

import (
	"context"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// recordLog is what the stores need from the log under them: Log, a compacted Kafka topic, or
// memoryLog for a standalone worker, which keeps its connectors in memory as Kafka Connect's
// standalone mode does.
type recordLog interface {
	Start(ctx context.Context) error
	Close()
	ReadToEnd(ctx context.Context) error
	Write(ctx context.Context, recs ...Record) error
}

var (
	_ recordLog = (*Log)(nil)
	_ recordLog = (*memoryLog)(nil)
)

// memoryLog hands every record written to the store's handler at once, with increasing offsets,
// so the store applies exactly the rules it applies to records read from Kafka.
type memoryLog struct {
	topic   string
	handler func(*kgo.Record)

	mu   sync.Mutex
	next int64
}

func newMemoryLog(topic string, handler func(*kgo.Record)) *memoryLog {
	return &memoryLog{topic: topic, handler: handler}
}

func (m *memoryLog) Start(context.Context) error     { return nil }
func (m *memoryLog) Close()                          {}
func (m *memoryLog) ReadToEnd(context.Context) error { return nil }

func (m *memoryLog) Write(_ context.Context, recs ...Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range recs {
		m.handler(&kgo.Record{Topic: m.topic, Key: r.Key, Value: r.Value, Offset: m.next})
		m.next++
	}
	return nil
}
