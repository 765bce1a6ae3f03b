package hcl

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func parse(t *testing.T, opts Options, files ...string) (*Connectors, error) {
	t.Helper()
	var fs []File
	for i := 0; i+1 < len(files); i += 2 {
		fs = append(fs, File{Name: files[i], Src: []byte(files[i+1])})
	}
	return ParseConnectors(fs, opts)
}

func mustParse(t *testing.T, opts Options, files ...string) *Connectors {
	t.Helper()
	cs, err := parse(t, opts, files...)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func noEnv(string) (string, bool) { return "", false }

// The minimal form of the issue works as written.
func TestMinimalConnector(t *testing.T) {
	cs := mustParse(t, Options{LookupEnv: noEnv}, "orders.hcl", `
connector "orders" {
  class     = "FileStreamSource"
  tasks_max = 1
  config = {
    file  = "/data/orders.txt"
    topic = "orders"
  }
}
`)
	if len(cs.Connectors) != 1 {
		t.Fatalf("connectors: %+v", cs.Connectors)
	}
	c := cs.Connectors[0]
	want := map[string]string{"connector.class": "FileStreamSource", "tasks.max": "1", "file": "/data/orders.txt", "topic": "orders"}
	if c.Name != "orders" || c.State != StateRunning || !reflect.DeepEqual(c.Config, want) || c.Secret != nil || c.KeyPositions["topic"] != "orders.hcl:7,5" {
		t.Fatalf("got %+v", c)
	}
	if c.Position() != "orders.hcl:2,1" {
		t.Fatalf("position %s", c.Position())
	}
}

func TestFullConnector(t *testing.T) {
	env := map[string]string{"TOPIC_PREFIX": "prod", "WASMCONNECT_VAR_replicas": "3"}
	opts := Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, Vars: map[string]string{"tasks": "4"}}
	cs := mustParse(t, opts, "vars.hcl", `
variable "tasks" {
  type    = number
  default = 1
}
variable "replicas" {
  type    = number
  default = 1
}
variable "dlq" {
  default = "dlq-orders"
}
locals {
  topic = "${local.prefix}-orders"
  prefix = env("TOPIC_PREFIX")
}
`, "sink.hcl", `
connector "orders-sink" {
  class     = "org.apache.kafka.connect.file.FileStreamSinkConnector"
  tasks_max = var.tasks
  state     = "paused"
  config = {
    topics            = [local.topic, "audit"]
    "file"            = "/tmp/out.txt"
    "db.password"     = secret("env", "DB_PASSWORD")
    "ssl.keystore"    = secret("file", "/etc/kafka/secrets.properties", "keystore.password")
    "skipped"         = null
  }

  predicate "isAudit" {
    type    = "TopicNameMatches"
    pattern = "audit.*"
  }
  transform "route" {
    type        = "RegexRouter"
    regex       = "(.*)"
    replacement = "$1-copy"
    predicate   = "isAudit"
    negate      = true
  }
  transform "insert" {
    type         = "org.apache.kafka.connect.transforms.InsertField$Value"
    static_field = "origin"
    config = {
      "static.value" = "wasmconnect"
    }
  }

  value_converter {
    class          = "org.apache.kafka.connect.json.JsonConverter"
    schemas_enable = false
  }
  key_converter {
    class = "StringConverter"
  }

  errors {
    tolerance                            = "all"
    dead_letter_queue_topic              = var.dlq
    dead_letter_queue_replication_factor = var.replicas
    log_enable                           = true
  }
}
`)
	c := cs.Connectors[0]
	want := map[string]string{
		"connector.class":                   "org.apache.kafka.connect.file.FileStreamSinkConnector",
		"tasks.max":                         "4",
		"topics":                            "prod-orders,audit",
		"file":                              "/tmp/out.txt",
		"db.password":                       "${env:DB_PASSWORD}",
		"ssl.keystore":                      "${file:/etc/kafka/secrets.properties:keystore.password}",
		"predicates":                        "isAudit",
		"predicates.isAudit.type":           "TopicNameMatches",
		"predicates.isAudit.pattern":        "audit.*",
		"transforms":                        "route,insert",
		"transforms.route.type":             "RegexRouter",
		"transforms.route.regex":            "(.*)",
		"transforms.route.replacement":      "$1-copy",
		"transforms.route.predicate":        "isAudit",
		"transforms.route.negate":           "true",
		"transforms.insert.type":            "org.apache.kafka.connect.transforms.InsertField$Value",
		"transforms.insert.static.field":    "origin",
		"transforms.insert.static.value":    "wasmconnect",
		"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable":    "false",
		"key.converter":                     "StringConverter",
		"errors.tolerance":                  "all",
		"errors.deadletterqueue.topic.name": "dlq-orders",
		"errors.deadletterqueue.topic.replication.factor": "3",
		"errors.log.enable": "true",
	}
	if !reflect.DeepEqual(c.Config, want) {
		for k, v := range c.Config {
			if want[k] != v {
				t.Errorf("%s = %q, want %q", k, v, want[k])
			}
		}
		for k := range want {
			if _, ok := c.Config[k]; !ok {
				t.Errorf("%s missing", k)
			}
		}
	}
	if c.State != StatePaused {
		t.Errorf("state %s", c.State)
	}
	if !reflect.DeepEqual(c.Secret, map[string]bool{"db.password": true, "ssl.keystore": true}) {
		t.Errorf("secret keys %v", c.Secret)
	}
	if c.Position() != "sink.hcl:2,1" {
		t.Errorf("position %s", c.Position())
	}
}

func TestConnectorErrorsHavePositionsAndSayWhatIsExpected(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"syntax", []string{"one.hcl", "connector \"a\" {\n  class = \"X\"\n}\n", "two.hcl", "connector \"b\" {\n  class = \"X\"\n  config = {\n    topic = \n  }\n}\n"},
			[]string{"two.hcl:4,"}},
		{"syntax col", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  state = running\"\n}\n"}, []string{"two.hcl:3,"}},
		{"unknown argument", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  task_max = 2\n}\n"},
			[]string{"two.hcl:3,3: Unsupported argument", "Did you mean \"tasks_max\"?", "Expected one of: class, tasks_max, state, config"}},
		{"unknown block", []string{"two.hcl", "conector \"b\" {\n}\n"}, []string{"two.hcl:1,1: Unsupported block type", "Expected blocks: connector, variable, locals"}},
		{"missing class", []string{"two.hcl", "connector \"b\" {\n  tasks_max = 1\n}\n"}, []string{"two.hcl:", "class"}},
		{"bad state", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  state = \"sleeping\"\n}\n"},
			[]string{`two.hcl:3,11: Invalid state; connector "b": state "sleeping": expected "running", "paused" or "stopped"`}},
		{"bad tasks", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  tasks_max = 0\n}\n"}, []string{"two.hcl:3,15: Invalid tasks_max", "at least 1"}},
		{"duplicate", []string{"one.hcl", "connector \"orders\" {\n  class = \"X\"\n}\n", "two.hcl", "\n\nconnector \"orders\" {\n  class = \"Y\"\n}\n"},
			[]string{`two.hcl:3,11: Duplicate connector "orders"; connector "orders" is already declared at one.hcl:1,11`}},
		{"key twice", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  tasks_max = 1\n  config = {\n    \"tasks.max\" = 2\n  }\n}\n"},
			[]string{`two.hcl:5,5: Key set twice; connector "b": "tasks.max" is set by config here and by tasks_max at two.hcl:3,15`}},
		{"name in config", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  config = { name = \"c\" }\n}\n"}, []string{"two.hcl:3,14: Name in config"}},
		{"unknown predicate", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  transform \"t\" {\n    type = \"Filter\"\n    predicate = \"p\"\n  }\n}\n"},
			[]string{`two.hcl:5,17: Unknown predicate; connector "b": transform "t" refers to predicate "p", which this connector does not declare; expected one of: (none)`}},
		{"transform without type", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  transform \"t\" {\n  }\n}\n"}, []string{"two.hcl:3,3: Missing type"}},
		{"errors block", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  errors {\n    tolerance = \"some\"\n    dlq = \"x\"\n  }\n}\n"},
			[]string{`two.hcl:4,17: Invalid tolerance; errors.tolerance "some": expected "none" or "all"`, "two.hcl:5,5: Unsupported argument", "dead_letter_queue_topic"}},
		{"env unset", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  config = { topic = env(\"NOPE_NOT_SET\") }\n}\n"},
			[]string{"two.hcl:3,22:", "NOPE_NOT_SET is not set"}},
		{"clear secret", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  config = {\n    \"connection.password\" = env(\"PW\", \"x\")\n  }\n}\n"},
			[]string{`two.hcl:4,5: Secret in clear; connector "b": "connection.password" takes its value from env("PW") in clear`, `expected secret("env", "PW")`}},
		{"variable without value", []string{"two.hcl", "variable \"x\" {}\n"}, []string{"two.hcl:1,1: Variable without a value", "WASMCONNECT_VAR_x"}},
		{"undeclared var", []string{"two.hcl", "variable \"a\" { default = 1 }\nconnector \"b\" {\n  class = var.nope\n}\n"},
			[]string{`two.hcl:3,11: Undeclared variable; var.nope is not declared; declared variables: a`}},
		{"undeclared local", []string{"two.hcl", "locals { x = local.y }\n"}, []string{`two.hcl:1,14: Undeclared local; local.y is not defined`}},
		{"bare word", []string{"two.hcl", "connector \"b\" {\n  class = FileStreamSource\n}\n"}, []string{`two.hcl:2,11: Unknown reference; "FileStreamSource": expected var.<name>`, "a string needs quotes"}},
		{"bad secret", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  config = { p = secret(\"e nv\", \"X\") }\n}\n"}, []string{"two.hcl:3,", "config.providers"}},
		{"config not a map", []string{"two.hcl", "connector \"b\" {\n  class = \"X\"\n  config = \"topic=x\"\n}\n"}, []string{"two.hcl:3,12: Invalid config", "expected a map"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, Options{LookupEnv: noEnv}, tc.files...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestErrorProblems(t *testing.T) {
	_, err := parse(t, Options{LookupEnv: noEnv}, "two.hcl", "connector \"b\" {\n  class = \"X\"\n  state = \"x\"\n}\n")
	e, ok := err.(*Error)
	if !ok || len(e.Problems) != 1 || e.Problems[0].File != "two.hcl" || e.Problems[0].Line != 3 || e.Problems[0].Column != 11 {
		t.Fatalf("%#v", err)
	}
}

func TestLoadConnectorsDir(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.hcl"), []byte(`connector "b" { class = "X" }`), 0o644)
	os.WriteFile(filepath.Join(dir, "a.hcl"), []byte(`connector "a" { class = file("secret.txt") }`), 0o644)
	os.WriteFile(filepath.Join(dir, ".#a.hcl"), []byte(`garbage {`), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(`garbage {`), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte(`FileStreamSource`), 0o644)
	cs, err := LoadConnectorsDir(dir, Options{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Files) != 2 || len(cs.Connectors) != 2 || cs.Connectors[0].Config["connector.class"] != "FileStreamSource" {
		t.Fatalf("%+v", cs)
	}
	if _, err := LoadConnectorsDir(filepath.Join(dir, "missing"), Options{}); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Fatalf("missing dir: %v", err)
	}
	// An empty directory declares no connectors: that is a valid desired state.
	cs, err = LoadConnectorsDir(t.TempDir(), Options{})
	if err != nil || len(cs.Connectors) != 0 {
		t.Fatalf("%+v %v", cs, err)
	}
}

func TestVariablesPrecedence(t *testing.T) {
	src := `
variable "topic" { default = "from-default" }
connector "c" {
  class = "X"
  config = { topic = var.topic, dir = abspath("data") }
}`
	get := func(opts Options) map[string]string {
		return mustParse(t, opts, "c.hcl", src).Connectors[0].Config
	}
	opts := Options{LookupEnv: noEnv, WorkDir: "/work"}
	if c := get(opts); c["topic"] != "from-default" || c["dir"] != "/work/data" {
		t.Fatal(c)
	}
	opts.LookupEnv = func(k string) (string, bool) { return "from-env", k == "WASMCONNECT_VAR_topic" }
	if got := get(opts)["topic"]; got != "from-env" {
		t.Fatal(got)
	}
	opts.Vars = map[string]string{"topic": "from-flag"}
	if got := get(opts)["topic"]; got != "from-flag" {
		t.Fatal(got)
	}
	opts.Vars = map[string]string{"other": "x"}
	if _, err := parse(t, opts, "c.hcl", src); err == nil || !strings.Contains(err.Error(), `--var other: no variable "other" is declared`) {
		t.Fatal(err)
	}
}

func TestForExpressions(t *testing.T) {
	cs := mustParse(t, Options{LookupEnv: noEnv}, "c.hcl", `
variable "topics" { default = ["a", "b"] }
connector "c" {
  class  = "X"
  config = { topics = [for t in var.topics : "${upper(t)}-in"] }
}`)
	if got := cs.Connectors[0].Config["topics"]; got != "A-in,B-in" {
		t.Fatal(got)
	}
}

func TestSecretPlaceholders(t *testing.T) {
	cs := mustParse(t, Options{LookupEnv: noEnv}, "c.hcl", `
connector "c" {
  class = "X"
  config = {
    a = secret("env", "A")
    b = secret("directory", "/run/secrets", "db")
    c = "jdbc:pg://h/db?password=${secret("env", "PW")}"
    d = "plain"
  }
}`)
	c := cs.Connectors[0]
	if c.Config["a"] != "${env:A}" || c.Config["b"] != "${directory:/run/secrets:db}" || c.Config["c"] != "jdbc:pg://h/db?password=${env:PW}" {
		t.Fatal(c.Config)
	}
	if !reflect.DeepEqual(c.Secret, map[string]bool{"a": true, "b": true, "c": true}) {
		t.Fatal(c.Secret)
	}
}
