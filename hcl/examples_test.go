package hcl

import (
	"os"
	"reflect"
	"testing"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// The examples parse, and examples/worker.hcl is examples/dev.properties.
func TestExamples(t *testing.T) {
	env := map[string]string{"DB_HOST": "db"}
	src, err := os.ReadFile("../examples/connector-reference.hcl")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := ParseConnectors([]File{{Name: "connector-reference.hcl", Src: src}},
		Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	c := cs.Connectors[0]
	for k, want := range map[string]string{
		"topics":                            "dev-inventory-items,dev-inventory-prices",
		"connection.password":               "${env:DB_PASSWORD}",
		"connection.url":                    "jdbc:postgresql://db:5432/inventory",
		"transforms":                        "drop-tombstones,origin",
		"transforms.origin.static.value":    "inventory",
		"errors.deadletterqueue.topic.name": "dev-inventory-dlq",
		"tasks.max":                         "2",
	} {
		if c.Config[k] != want {
			t.Errorf("%s = %q, want %q", k, c.Config[k], want)
		}
	}

	if _, err := LoadConnectorsDir("../examples/connectors", Options{}); err != nil {
		t.Fatal(err)
	}

	fromHCL, err := ReadWorkerConfig("../examples/worker.hcl")
	if err != nil {
		t.Fatal(err)
	}
	fromProps, err := config.ReadProperties("../examples/dev.properties")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromHCL, fromProps) {
		for k, v := range fromProps {
			if fromHCL[k] != v {
				t.Errorf("worker.hcl: %s = %q, dev.properties has %q", k, fromHCL[k], v)
			}
		}
		for k, v := range fromHCL {
			if _, ok := fromProps[k]; !ok {
				t.Errorf("worker.hcl: %s = %q is not in dev.properties", k, v)
			}
		}
	}
}
