package task

import (
	"slices"
	"testing"
)

type topicList []string

func (l *topicList) Record(topic string) { *l = append(*l, topic) }

func TestTopicSetReportsEachTopicOnce(t *testing.T) {
	var got topicList
	s := newTopicSet(&got)
	for _, topic := range []string{"a", "a", "b", "a", "c", "b", "c"} {
		if s.first(topic) {
			s.rec.Record(topic)
		}
	}
	if !slices.Equal(got, topicList{"a", "b", "c"}) {
		t.Errorf("recorded %q", got)
	}
	var off *topicSet = newTopicSet(nil) // topic.tracking.enable=false
	if off != nil || off.first("a") {
		t.Error("a nil recorder must track nothing")
	}
}
