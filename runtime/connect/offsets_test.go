package connect

import (
	"encoding/json"
	"log/slog"
	"testing"
)

func TestParseSinkOffsets(t *testing.T) {
	tp := TopicPartition{Topic: "t", Partition: 3}
	got, err := ParseSinkOffsets([]ConnectorOffset{
		{Partition: map[string]any{KafkaTopicKey: "t", KafkaPartitionKey: json.Number("3")}, Offset: map[string]any{KafkaOffsetKey: json.Number("9223372036854775807")}},
		{Partition: map[string]any{KafkaTopicKey: "u", KafkaPartitionKey: "0"}, Offset: map[string]any{KafkaOffsetKey: "10"}},
		{Partition: map[string]any{KafkaTopicKey: "v", KafkaPartitionKey: float64(1)}, Offset: nil},
	})
	if err != nil {
		t.Fatal(err)
	}
	if o := got[tp]; o == nil || *o != 9223372036854775807 {
		t.Errorf("t-3 = %v", o)
	}
	if o := got[TopicPartition{"u", 0}]; o == nil || *o != 10 {
		t.Errorf("u-0 = %v", o)
	}
	if o, ok := got[TopicPartition{"v", 1}]; !ok || o != nil {
		t.Errorf("v-1 = %v %v (want a reset)", o, ok)
	}

	for _, tc := range []struct {
		o    ConnectorOffset
		want string
	}{
		{ConnectorOffset{}, "The partition for a sink connector offset cannot be null or missing"},
		{ConnectorOffset{Partition: map[string]any{KafkaTopicKey: "t"}}, "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"},
		{ConnectorOffset{Partition: map[string]any{KafkaTopicKey: nil, KafkaPartitionKey: 1}}, "Kafka topic names must be valid strings and may not be null"},
		{ConnectorOffset{Partition: map[string]any{KafkaTopicKey: "t", KafkaPartitionKey: nil}}, "Kafka partitions must be valid numbers and may not be null"},
		{ConnectorOffset{Partition: map[string]any{KafkaTopicKey: "t", KafkaPartitionKey: json.Number("1.5")}},
			"Failed to parse the following Kafka partition value in the provided offsets: '1.5'. Partition values for sink connectors need to be integers."},
		{ConnectorOffset{Partition: map[string]any{KafkaTopicKey: "t", KafkaPartitionKey: 1}, Offset: map[string]any{"x": 1}},
			"The offset for a sink connector should either be null or contain the key 'kafka_offset'"},
		{ConnectorOffset{Partition: map[string]any{KafkaTopicKey: "t", KafkaPartitionKey: 1}, Offset: map[string]any{KafkaOffsetKey: true}},
			"Failed to parse the following Kafka offset value in the provided offsets: 'true'. Offset values for sink connectors need to be integers."},
	} {
		_, err := ParseSinkOffsets([]ConnectorOffset{tc.o})
		if err == nil || err.Error() != tc.want || StatusCode(err) != 400 {
			t.Errorf("%v: %v", tc.o, err)
		}
	}
}

func TestOffsetsJSON(t *testing.T) {
	b, _ := json.Marshal(ConnectorOffsets{Offsets: []ConnectorOffset{SinkOffset(TopicPartition{"t", 0}, 5)}})
	if string(b) != `{"offsets":[{"partition":{"kafka_partition":0,"kafka_topic":"t"},"offset":{"kafka_offset":5}}]}` {
		t.Errorf("%s", b)
	}
	if err := NotStopped("c"); StatusCode(err) != 400 || err.Error() != "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/c/stop' endpoint" {
		t.Errorf("%v", err)
	}
}

func TestLogLevels(t *testing.T) {
	if l, ok := ParseLogLevel(" debug "); !ok || l != "DEBUG" {
		t.Errorf("%q %v", l, ok)
	}
	if _, ok := ParseLogLevel("LOUD"); ok {
		t.Error("LOUD accepted")
	}
	prev := SlogLevel("ALL")
	for _, l := range []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "OFF"} {
		if SlogLevel(l) <= prev {
			t.Errorf("%s is not above the previous level", l)
		}
		prev = SlogLevel(l)
	}
	if SlogLevel("INFO") != slog.LevelInfo || SlogLevel("debug") != slog.LevelDebug {
		t.Error("INFO/DEBUG")
	}
}

func TestCountErrors(t *testing.T) {
	c := ConfigInfos{Configs: []ConfigInfo{{Value: &ConfigValueInfo{Errors: []string{"a", "b"}}}, {}, {Value: &ConfigValueInfo{Errors: []string{"c"}}}}}
	c.CountErrors()
	if c.ErrorCount != 3 {
		t.Errorf("%d", c.ErrorCount)
	}
}
