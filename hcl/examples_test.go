package hcl

import (
	"os"
	"path/filepath"
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

// The datagen -> PostgreSQL example (examples/postgres) parses alone and, as `make run
// POSTGRES_URL=...` lays it out, linked into one directory with examples/connectors; the URL is
// the one the Makefile passes in WASMCONNECT_VAR_postgres_url.
func TestPostgresExample(t *testing.T) {
	dir := t.TempDir()
	for _, pattern := range []string{"../examples/connectors/*.hcl", "../examples/postgres/*.hcl"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			abs, _ := filepath.Abs(f)
			if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(f))); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := map[string]string{"WASMCONNECT_VAR_postgres_url": "jdbc:postgresql://db:6543/demo"}
	cs, err := LoadConnectorsDir(dir, Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, c := range cs.Connectors {
		got[c.Name] = c.Config
	}
	gen, pg := got["example-datagen-orders"], got["example-orders-postgres"]
	if gen["connector.class"] != "io.confluent.kafka.connect.datagen.DatagenConnector" || gen["kafka.topic"] != "datagen-orders" || gen["quickstart"] != "orders" {
		t.Errorf("example-datagen-orders: %v", gen)
	}
	if pg["connector.class"] != "io.confluent.connect.jdbc.JdbcSinkConnector" || pg["topics"] != gen["kafka.topic"] ||
		pg["connection.url"] != "jdbc:postgresql://db:6543/demo" || pg["connection.password"] != "${env:PGPASSWORD}" ||
		pg["transforms.flatten.type"] != "org.apache.kafka.connect.transforms.Flatten$Value" || pg["pk.fields"] != "orderid" {
		t.Errorf("example-orders-postgres: %v", pg)
	}
	if len(got) != 5 {
		t.Errorf("%d connectors, want the 4 of examples/connectors and 1 of examples/postgres", len(got))
	}
	alone, err := LoadConnectorsDir("../examples/postgres", Options{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil || alone.Connectors[0].Config["connection.url"] != "jdbc:postgresql://127.0.0.1:5432/postgres" {
		t.Fatalf("examples/postgres alone: %v", err)
	}
}
