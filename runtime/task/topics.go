package task

// TopicRecorder learns the topics a task uses, for Kafka Connect's active topics (KIP-558): the
// topics a source task's records were written to and the topics a sink task consumed.
//
// A task tells it each topic once, the first time it sees it (the task keeps the set of topics it
// has reported), on its data path: Record must return at once and leave the write to the status
// topic to another goroutine.
type TopicRecorder interface {
	Record(topic string)
}

// topicSet is a task's memory of the topics it has reported. It is used by one goroutine only.
type topicSet struct {
	rec  TopicRecorder
	seen map[string]struct{}
	last string // the topic of the previous record: most batches have one topic
}

func newTopicSet(rec TopicRecorder) *topicSet {
	if rec == nil {
		return nil
	}
	return &topicSet{rec: rec, seen: map[string]struct{}{}}
}

// first reports whether topic is new to the task, and remembers it. A nil set (tracking is off)
// never has a new topic.
func (s *topicSet) first(topic string) bool {
	if s == nil || topic == s.last {
		return false
	}
	s.last = topic
	if _, ok := s.seen[topic]; ok {
		return false
	}
	s.seen[topic] = struct{}{}
	return true
}
