package broker

import (
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// autoCreateTopics makes c create the topics a metadata request asks to be
// created (Kafka's auto.create.topics.enable), in place of kfake's own
// AllowAutoTopicCreation.
//
// kfake's auto-creation adds the topic to memory only: its data directory
// learns about the topic on the next CreateTopics, DeleteTopics or clean
// stop. After a kill -9 the restarted broker has the topic's segment files
// but not the topic, so producers recreate it with a new topic ID and
// offsets from 0 over the old files, and everything acknowledged to them is
// gone. Cluster.CreateTopic goes through the CreateTopics code, which
// writes the topic list to disk before the metadata response (and so
// before any produce to the topic) is answered.
func autoCreateTopics(c *kfake.Cluster) {
	c.ControlKey(int16(kmsg.Metadata), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		req := kreq.(*kmsg.MetadataRequest)
		if !req.AllowAutoTopicCreation {
			return nil, nil, false
		}
		for _, rt := range req.Topics {
			if rt.Topic == nil || *rt.Topic == "" {
				continue // asked by topic ID: only an existing topic has one
			}
			// An existing topic answers TOPIC_ALREADY_EXISTS and is left
			// alone. A topic that cannot be created (an invalid name, one
			// that collides with another over '.' and '_') is left to the
			// metadata handler, which reports it as unknown.
			_ = c.CreateTopic(*rt.Topic, -1, nil)
		}
		// Not handled: kfake answers the request as usual, now that the
		// topics exist, and keeps this function for the next request.
		return nil, nil, false
	})
}
