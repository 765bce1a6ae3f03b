package connect

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ConnectorOffsets is the body of GET /connectors/{name}/offsets and of PATCH /connectors/{name}/offsets
// (KIP-875): {"offsets":[{"partition":{...},"offset":{...}}]}.
type ConnectorOffsets struct {
	Offsets []ConnectorOffset `json:"offsets"`
}

// ConnectorOffset is one partition's offset. For a source connector both maps are what the plugin
// gave with its records (the key and value of the offsets topic record, without the connector name).
// For a sink connector the partition is {"kafka_topic":"t","kafka_partition":0} and the offset
// {"kafka_offset":5} (the committed offset of the consumer group, i.e. the next record to read).
//
// In a PATCH request a nil Offset resets that partition. Numbers in requests arrive as json.Number, so
// large offsets keep their precision; ParseSinkOffsets reads the sink form.
type ConnectorOffset struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

// The keys of a sink connector's offsets.
const (
	KafkaTopicKey     = "kafka_topic"
	KafkaPartitionKey = "kafka_partition"
	KafkaOffsetKey    = "kafka_offset"
)

// Message is the {"message":"..."} body of a successful PATCH or DELETE /connectors/{name}/offsets.
type Message struct {
	Message string `json:"message"`
}

// Kafka's answers to PATCH and DELETE /connectors/{name}/offsets. The "framework" forms are for a
// connector whose alterOffsets hook does not say it handled the change itself (in Kafka, when
// alterOffsets returns false; a wasmconnect plugin without such a hook gets these).
const (
	OffsetsAlteredMessage          = "The offsets for this connector have been altered successfully"
	OffsetsAlteredFrameworkMessage = "The Connect framework-managed offsets for this connector have been altered successfully. " +
		"However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	OffsetsResetMessage          = "The offsets for this connector have been reset successfully"
	OffsetsResetFrameworkMessage = "The Connect framework-managed offsets for this connector have been reset successfully. " +
		"However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
)

// NotStopped is Kafka's 400 for an offsets change on a connector that is not STOPPED (its target state
// is not STOPPED, or it still has task configs).
func NotStopped(connector string) error {
	return BadRequest("Connectors must be in the STOPPED state before their offsets can be modified. This can be done "+
		"for the specified connector by issuing a 'PUT' request to the '/connectors/%s/stop' endpoint", connector)
}

// TopicPartition names a partition of a Kafka topic.
type TopicPartition struct {
	Topic     string
	Partition int32
}

func (tp TopicPartition) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// ParseSinkOffsets reads the offsets of a PATCH for a sink connector, with Kafka's checks and 400
// texts (SinkUtils.parseSinkConnectorOffsets): the partition must hold kafka_topic and
// kafka_partition, the offset must be null (reset: a nil value in the result) or hold kafka_offset.
// Numbers may be given as JSON numbers or as strings ("10" and 10 are both accepted, as in Kafka).
func ParseSinkOffsets(offsets []ConnectorOffset) (map[TopicPartition]*int64, error) {
	out := make(map[TopicPartition]*int64, len(offsets))
	for _, o := range offsets {
		p := o.Partition
		if p == nil {
			return nil, BadRequest("The partition for a sink connector offset cannot be null or missing")
		}
		rawTopic, hasTopic := p[KafkaTopicKey]
		rawPart, hasPart := p[KafkaPartitionKey]
		if !hasTopic || !hasPart {
			return nil, BadRequest("The partition for a sink connector offset must contain the keys '%s' and '%s'", KafkaTopicKey, KafkaPartitionKey)
		}
		if rawTopic == nil {
			return nil, BadRequest("Kafka topic names must be valid strings and may not be null")
		}
		if rawPart == nil {
			return nil, BadRequest("Kafka partitions must be valid numbers and may not be null")
		}
		part, err := strconv.ParseInt(javaString(rawPart), 10, 32)
		if err != nil {
			return nil, BadRequest("Failed to parse the following Kafka partition value in the provided offsets: '%s'. "+
				"Partition values for sink connectors need to be integers.", javaString(rawPart))
		}
		tp := TopicPartition{Topic: javaString(rawTopic), Partition: int32(part)}
		if o.Offset == nil {
			out[tp] = nil
			continue
		}
		rawOff, ok := o.Offset[KafkaOffsetKey]
		if !ok {
			return nil, BadRequest("The offset for a sink connector should either be null or contain the key '%s'", KafkaOffsetKey)
		}
		off, err := strconv.ParseInt(javaString(rawOff), 10, 64)
		if err != nil {
			return nil, BadRequest("Failed to parse the following Kafka offset value in the provided offsets: '%s'. "+
				"Offset values for sink connectors need to be integers.", javaString(rawOff))
		}
		out[tp] = &off
	}
	return out, nil
}

// SinkOffset returns the ConnectorOffset of a sink connector's committed offset, as GET answers it.
func SinkOffset(tp TopicPartition, offset int64) ConnectorOffset {
	return ConnectorOffset{
		Partition: map[string]any{KafkaTopicKey: tp.Topic, KafkaPartitionKey: tp.Partition},
		Offset:    map[string]any{KafkaOffsetKey: offset},
	}
}

// javaString renders a decoded JSON value as Java's String.valueOf would.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return strconv.FormatInt(int64(x), 10)
		}
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case int:
		return strconv.Itoa(x)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSpace(string(b))
}
