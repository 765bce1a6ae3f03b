package worker

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/store"
	"github.com/wasmconnect/wasmconnect/runtime/task"
)

// TopicStatuses is where tasks' active topics are recorded (KIP-558): the status topic.
// *store.StatusStore implements it.
type TopicStatuses interface {
	// Topic returns a connector's record for a topic, if there is one.
	Topic(connector, topic string) (store.TopicStatus, bool)
	// PutTopic writes a record and returns once it has been read back.
	PutTopic(ctx context.Context, ts store.TopicStatus) error
}

// topicWriter writes active topic records off the tasks' data paths. Tasks enqueue a record
// the first time they see a topic; one goroutine, started when there is something to write and
// ended when there is not, writes them in order. A topic a connector already has a record for is
// not written again, so restarting tasks costs no writes.
type topicWriter struct {
	statuses TopicStatuses
	log      *slog.Logger
	backoff  time.Duration // first retry delay; doubled up to 30 s, 6 attempts in all

	mu      sync.Mutex
	queue   []store.TopicStatus
	running bool
	idle    chan struct{} // closed when the queue drains; for tests
}

func newTopicWriter(statuses TopicStatuses, log *slog.Logger) *topicWriter {
	return &topicWriter{statuses: statuses, log: log, backoff: time.Second}
}

// recorder returns the task.TopicRecorder of one task.
func (w *topicWriter) recorder(id connect.TaskID) task.TopicRecorder {
	return taskTopics{w: w, id: id}
}

type taskTopics struct {
	w  *topicWriter
	id connect.TaskID
}

func (t taskTopics) Record(topic string) {
	t.w.add(store.TopicStatus{Topic: topic, Connector: t.id.Connector, Task: int32(t.id.Task), Discovered: time.Now()})
}

func (w *topicWriter) add(ts store.TopicStatus) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = append(w.queue, ts)
	if !w.running {
		w.running = true
		w.idle = make(chan struct{})
		go w.drain()
	}
}

func (w *topicWriter) drain() {
	for {
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		if len(batch) == 0 {
			w.running = false
			close(w.idle)
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		for _, ts := range batch {
			w.write(ts)
		}
	}
}

func (w *topicWriter) write(ts store.TopicStatus) {
	if _, ok := w.statuses.Topic(ts.Connector, ts.Topic); ok {
		return
	}
	delay := w.backoff
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := w.statuses.PutTopic(ctx, ts)
		cancel()
		if err == nil {
			return
		}
		if attempt == 6 {
			w.log.Warn("recording an active topic failed; GET /connectors/{name}/topics will not list it until the task restarts",
				"connector", ts.Connector, "task", ts.Task, "topic", ts.Topic, "err", err)
			return
		}
		time.Sleep(delay)
		delay = min(delay*2, 30*time.Second)
	}
}
