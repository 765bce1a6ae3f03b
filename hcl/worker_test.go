package hcl

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseWorkerConfig(t *testing.T) {
	src := `
bootstrap_servers = ["127.0.0.1:9092", "127.0.0.1:9093"]
group_id          = "connect-cluster"
offset_flush_interval_ms = 10000
topic_tracking_enable = false
properties = {
  "value.converter.schemas.enable" = false
}
`
	got, err := ParseWorkerConfig([]byte(src), "worker.hcl")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bootstrap.servers":              "127.0.0.1:9092,127.0.0.1:9093",
		"group.id":                       "connect-cluster",
		"offset.flush.interval.ms":       "10000",
		"topic.tracking.enable":          "false",
		"value.converter.schemas.enable": "false",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestParseWorkerConfigErrorsHavePositions(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"group_id = \n", "worker.hcl:1,"},
		{"group_id = \"a\"\nplugin_path = { a = 1 }\n", "worker.hcl:2,15: plugin_path: expected a string"},
		{"a = 1\nbad {\n}\n", "worker.hcl:2,"},
	} {
		_, err := ParseWorkerConfig([]byte(tc.src), "worker.hcl")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.src, err, tc.want)
		}
	}
}
