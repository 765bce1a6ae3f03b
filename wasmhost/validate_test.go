package wasmhost

import (
	"reflect"
	"testing"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// TestCheckConfigHidesPasswords checks the host's own pass over a descriptor: Kafka's texts, and a
// password's value never shown, whether the key is a PASSWORD or only named like one (as the SDK
// does inside the plugin, so that the merged answer has one message per problem).
func TestCheckConfigHidesPasswords(t *testing.T) {
	keys := []wire.ConfigKey{{Name: "port", Type: "INT"}, {Name: "db.password", Type: "INT"}, {Name: "req", Type: "STRING", Required: true}}
	got := checkConfig(keys, map[string]string{"port": "x", "db.password": "hunter2"})
	want := map[string][]string{
		"port":        {"Invalid value x for configuration port: Not a number of type INT"},
		"db.password": {"Invalid value [hidden] for configuration db.password: Not a number of type INT"},
		"req":         {`Missing required configuration "req" which has no default value.`},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("checkConfig:\n got %q\nwant %q", got, want)
	}
}
