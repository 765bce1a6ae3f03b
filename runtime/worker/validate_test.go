package worker

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/configprovider"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient"
)

// byName indexes a validation result by key.
func byName(t *testing.T, infos connect.ConfigInfos) map[string]connect.ConfigInfo {
	t.Helper()
	m := map[string]connect.ConfigInfo{}
	for _, ci := range infos.Configs {
		if ci.Value == nil {
			t.Fatalf("entry without a value: %+v", ci.Definition)
		}
		if _, dup := m[ci.Value.Name]; dup {
			t.Fatalf("key %s listed twice", ci.Value.Name)
		}
		if ci.Definition != nil && ci.Definition.Name != ci.Value.Name {
			t.Fatalf("definition %s has the value of %s", ci.Definition.Name, ci.Value.Name)
		}
		m[ci.Value.Name] = ci
	}
	return m
}

func names(infos connect.ConfigInfos) []string {
	var out []string
	for _, ci := range infos.Configs {
		out = append(out, ci.Value.Name)
	}
	return out
}

func value(ci connect.ConfigInfo) string {
	if ci.Value.Value == nil {
		return "<null>"
	}
	return *ci.Value.Value
}

// AKHQ sends only connector.class and topics to get the form of a connector: the result lists
// every key, framework's then plugin's, with the defaults, and the two required keys missing.
func TestValidatePartialSinkConfig(t *testing.T) {
	w := testWorker(t, Config{})
	infos, typ, err := w.ValidateConfig(context.Background(), map[string]string{"connector.class": "FileStreamSink", "topics": "t1, t2"})
	if err != nil || typ != connect.TypeSink {
		t.Fatal(typ, err)
	}
	if infos.Name != "FileStreamSink" || infos.ErrorCount != 2 {
		t.Errorf("name %q, error_count %d", infos.Name, infos.ErrorCount)
	}
	if !slices.Equal(infos.Groups, []string{"Common", "Transforms", "Predicates", "Error Handling"}) {
		t.Errorf("groups %q", infos.Groups)
	}
	want := []string{"name", "connector.class", "tasks.max", "tasks.max.enforce", "key.converter", "value.converter",
		"header.converter", "transforms", "predicates", "config.action.reload", "errors.retry.timeout",
		"errors.retry.delay.max.ms", "errors.tolerance", "errors.log.enable", "errors.log.include.messages",
		"topics", "topics.regex", "errors.deadletterqueue.topic.name", "errors.deadletterqueue.topic.replication.factor",
		"errors.deadletterqueue.context.headers.enable", "file"}
	if got := names(infos); !slices.Equal(got, want) {
		t.Errorf("keys\n got %q\nwant %q", got, want)
	}
	m := byName(t, infos)
	for key, v := range map[string]string{
		"name": "<null>", "connector.class": "FileStreamSink", "tasks.max": "1", "key.converter": "<null>",
		"transforms": "", "config.action.reload": "restart", "errors.tolerance": "none", "errors.log.enable": "false",
		"topics": "t1,t2", "topics.regex": "", "errors.deadletterqueue.topic.replication.factor": "3", "file": "<null>",
	} {
		if got := value(m[key]); got != v {
			t.Errorf("%s = %q, want %q", key, got, v)
		}
	}
	if e := m["name"].Value.Errors; !slices.Equal(e, []string{`Missing required configuration "name" which has no default value.`}) {
		t.Errorf("name errors %q", e)
	}
	if e := m["file"].Value.Errors; !slices.Equal(e, []string{`Missing required configuration "file" which has no default value.`}) {
		t.Errorf("file errors %q", e)
	}
	d := m["tasks.max"].Definition
	if d.Type != "INT" || d.Required || *d.DefaultValue != "1" || d.Importance != "HIGH" || *d.Group != "Common" || d.Order != 3 ||
		d.Width != "SHORT" || d.DisplayName != "Tasks max" || d.Documentation != "Maximum number of tasks to use for this connector." {
		t.Errorf("tasks.max definition %+v", d)
	}
	if d := m["file"].Definition; d.Group != nil || !d.Required || d.Importance != "HIGH" {
		t.Errorf("file definition %+v", d)
	}
	// As JSON: every value has its lists, visible is true.
	b, _ := json.Marshal(m["topics"])
	if !strings.Contains(string(b), `"value":{"name":"topics","value":"t1,t2","recommended_values":null,"errors":null,"visible":true}`) {
		t.Errorf("topics as JSON: %s", b)
	}
}

func TestValidateErrors(t *testing.T) {
	w := testWorker(t, Config{})
	cfg := map[string]string{
		"name":                              "bad\nname",
		"connector.class":                   "org.apache.kafka.connect.file.FileStreamSinkConnector",
		"tasks.max":                         "0",
		"tasks.max.enforce":                 "maybe",
		"key.converter":                     "com.example.Nope",
		"value.converter":                   "FileStreamSource", // a plugin, but no converter
		"errors.tolerance":                  "some",
		"errors.retry.timeout":              "soon",
		"topics":                            "a,dlq",
		"topics.regex":                      "a.*",
		"errors.deadletterqueue.topic.name": "dlq",
		"file":                              " ",
		"consumer.override.group.id":        "connect-cluster",
	}
	infos, _, err := w.ValidateConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := byName(t, infos)
	want := map[string][]string{
		"consumer.override.group.id": {"Consumer group connect-cluster conflicts with Connect worker group connect-cluster"},
		"name":                       {"Invalid value bad\nname for configuration name: String may not contain control sequences but had the following ASCII chars: 10"},
		"tasks.max":                  {"Invalid value 0 for configuration tasks.max: Value must be at least 1"},
		"tasks.max.enforce":          {"Invalid value maybe for configuration tasks.max.enforce: Expected value to be either true or false"},
		"key.converter":              {"Invalid value com.example.Nope for configuration key.converter: Class com.example.Nope could not be found."},
		"value.converter":            {"Invalid value class org.apache.kafka.connect.file.FileStreamSourceConnector for configuration value.converter: Not a Converter"},
		"errors.tolerance":           {"Invalid value some for configuration errors.tolerance: String must be one of: none, all"},
		"errors.retry.timeout":       {"Invalid value soon for configuration errors.retry.timeout: Not a number of type LONG"},
		"topics": {"topics and topics.regex are mutually exclusive options, but both are set.",
			"The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') consumed by the connector"},
		"topics.regex": {"topics and topics.regex are mutually exclusive options, but both are set."},
		"file":         {`FileStreamSink requires "file": writing to the standard output is not supported in the wasm sandbox`},
	}
	total := 0
	for key, errs := range want {
		total += len(errs)
		if got := m[key].Value.Errors; !slices.Equal(got, errs) {
			t.Errorf("%s errors\n got %q\nwant %q", key, got, errs)
		}
	}
	if infos.ErrorCount != total {
		t.Errorf("error_count %d, want %d", infos.ErrorCount, total)
	}
	// The key nothing defines comes first, without a definition and value.
	if first := infos.Configs[0]; first.Definition != nil || first.Value.Name != "consumer.override.group.id" || first.Value.Value != nil {
		t.Errorf("first entry %+v %+v", first.Definition, first.Value)
	}
	if value(m["tasks.max"]) != "0" || value(m["key.converter"]) != "<null>" || value(m["value.converter"]) != "org.apache.kafka.connect.file.FileStreamSourceConnector" {
		t.Errorf("values: tasks.max %s key.converter %s value.converter %s", value(m["tasks.max"]), value(m["key.converter"]), value(m["value.converter"]))
	}

	// Validate turns the same result into Kafka's 400, every message in order.
	typ, err := w.Validate(context.Background(), cfg)
	if typ != connect.TypeSink || connect.StatusCode(err) != 400 {
		t.Fatalf("Validate: %v %v", typ, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "Connector configuration is invalid and contains the following 12 error(s):\n"+
		"Consumer group connect-cluster conflicts with Connect worker group connect-cluster\n"+
		"Invalid value bad\nname for configuration name: String may not contain control sequences but had the following ASCII chars: 10\n"+
		"Invalid value 0 for configuration tasks.max: Value must be at least 1\n") ||
		!strings.HasSuffix(msg, "\n"+`FileStreamSink requires "file": writing to the standard output is not supported in the wasm sandbox`+
			"\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`") {
		t.Errorf("400 text:\n%s", msg)
	}

	// A valid config passes.
	if _, err := w.Validate(context.Background(), map[string]string{"name": "ok", "connector.class": "FileStreamSink", "topics": "a", "file": testDataDir + "/out"}); err != nil {
		t.Errorf("valid config: %v", err)
	}
	// An unknown class is a 400 with Kafka's text.
	if _, _, err := w.ValidateConfig(context.Background(), map[string]string{"connector.class": "Nope"}); connect.StatusCode(err) != 400 ||
		!strings.HasPrefix(err.Error(), "Failed to find any class that implements Connector and which name matches Nope, available connectors are: ") {
		t.Errorf("unknown class: %v", err)
	}
}

func TestValidateSinkTopicRules(t *testing.T) {
	w := testWorker(t, Config{Worker: nil})
	base := map[string]string{"name": "s", "connector.class": "FileStreamSink", "file": "/x"}
	for _, tc := range []struct {
		extra        map[string]string
		topics, rgx  []string
		regexInvalid bool
	}{
		{extra: nil, topics: []string{"Must configure one of topics or topics.regex"}, rgx: []string{"Must configure one of topics or topics.regex"}},
		{extra: map[string]string{"topics": " ", "topics.regex": ""}, topics: []string{"Must configure one of topics or topics.regex"}, rgx: []string{"Must configure one of topics or topics.regex"}},
		{extra: map[string]string{"topics.regex": "d.*", "errors.deadletterqueue.topic.name": "dlq"},
			rgx: []string{"The DLQ topic 'dlq' may not be matched by the regex for the topics ('topics.regex=d.*') consumed by the connector"}},
		{extra: map[string]string{"topics.regex": "x", "errors.deadletterqueue.topic.name": "xdlq"}}, // regexes match whole names
		{extra: map[string]string{"topics.regex": "(?<=a)b"}, regexInvalid: true},
	} {
		cfg := merged(base, tc.extra)
		infos, _, err := w.ValidateConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := byName(t, infos)
		if got := m["topics"].Value.Errors; !slices.Equal(got, tc.topics) {
			t.Errorf("%v: topics errors %q", tc.extra, got)
		}
		got := m["topics.regex"].Value.Errors
		if tc.regexInvalid {
			if len(got) != 1 || !strings.HasPrefix(got[0], "Invalid value (?<=a)b for configuration topics.regex: Invalid regex: ") {
				t.Errorf("invalid regex: %q", got)
			}
		} else if !slices.Equal(got, tc.rgx) {
			t.Errorf("%v: topics.regex errors %q", tc.extra, got)
		}
	}
}

func merged(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestValidateSourceGroupsAndPluginChecks(t *testing.T) {
	w := testWorker(t, Config{})
	infos, typ, err := w.ValidateConfig(context.Background(), map[string]string{
		"name": "src", "connector.class": "FileStreamSource", "file": "/f", "topic": "a,b", "batch.size": "many",
		"exactly.once.support": "Sometimes", "transaction.boundary": "INTERVAL", "offsets.storage.topic": "",
		"transaction.boundary.interval.ms": "-1",
	})
	if err != nil || typ != connect.TypeSource {
		t.Fatal(typ, err)
	}
	if !slices.Equal(infos.Groups, []string{"Common", "Transforms", "Predicates", "Error Handling", "Topic Creation", "Exactly Once Support", "offsets.topic"}) {
		t.Errorf("groups %q", infos.Groups)
	}
	m := byName(t, infos)
	for key, errs := range map[string][]string{
		"exactly.once.support":             {"Invalid value Sometimes for configuration exactly.once.support: String must be one of (case insensitive): REQUESTED, REQUIRED"},
		"transaction.boundary":             nil, // case-insensitive
		"transaction.boundary.interval.ms": {"Invalid value -1 for configuration transaction.boundary.interval.ms: Value must be at least 0"},
		"offsets.storage.topic":            {"Invalid value  for configuration offsets.storage.topic: String must be non-empty"},
		"topic":                            {"'topic' in FileStreamSourceConnector configuration requires definition of a single topic"},
		"batch.size":                       {"Invalid value many for configuration batch.size: Not a number of type INT"},
	} {
		if got := m[key].Value.Errors; !slices.Equal(got, errs) {
			t.Errorf("%s errors\n got %q\nwant %q", key, got, errs)
		}
	}
	if _, ok := m["topics"]; ok {
		t.Error("a source lists topics")
	}
	if last := infos.Configs[len(infos.Configs)-1].Value.Name; last != "batch.size" {
		t.Errorf("the plugin's keys do not come last: %s", last)
	}
}

// A converter the connector sets is checked with its own keys, under its prefix.
func TestValidateConverterConfig(t *testing.T) {
	w := testWorker(t, Config{})
	infos, _, err := w.ValidateConfig(context.Background(), map[string]string{
		"name": "s", "connector.class": "FileStreamSink", "topics": "t", "file": "/f",
		"value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "perhaps",
		"value.converter.decimal.format": "numeric",
	})
	if err != nil {
		t.Fatal(err)
	}
	m := byName(t, infos)
	if got := m["value.converter.schemas.enable"].Value.Errors; !slices.Equal(got, []string{"Invalid value perhaps for configuration schemas.enable: Expected value to be either true or false"}) {
		t.Errorf("schemas.enable errors %q", got)
	}
	if d := m["value.converter.schemas.enable"].Definition; d == nil || d.Name != "value.converter.schemas.enable" || *d.Group != "Schemas" {
		t.Errorf("definition %+v", d)
	}
	if v := value(m["value.converter.converter.type"]); v != "value" {
		t.Errorf("converter.type = %s", v)
	}
	if v := value(m["value.converter.schemas.cache.size"]); v != "1000" {
		t.Errorf("default not shown: %s", v)
	}
	if _, ok := m["key.converter.schemas.enable"]; ok {
		t.Error("the worker's key converter was validated")
	}
	if !slices.Contains(infos.Groups, "Schemas") || infos.ErrorCount != 1 {
		t.Errorf("groups %q, error_count %d", infos.Groups, infos.ErrorCount)
	}
}

// transforms and predicates add each alias's keys, with the plugin's own.
func TestValidateTransformsAndPredicates(t *testing.T) {
	w := testWorker(t, Config{})
	infos, _, err := w.ValidateConfig(context.Background(), map[string]string{
		"name": "s", "connector.class": "FileStreamSink", "topics": "t", "file": "/f",
		"transforms": "route,bad,none", "transforms.route.type": "RegexRouter", "transforms.route.regex": "(",
		"transforms.route.negate": "true",
		"transforms.bad.type":     "com.example.Nope",
		"predicates":              "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
	})
	if err != nil {
		t.Fatal(err)
	}
	m := byName(t, infos)
	got := names(infos)
	i := slices.Index(got, "transforms.route.type")
	if i < 0 || !slices.Equal(got[i:i+5], []string{"transforms.route.type", "transforms.route.regex", "transforms.route.replacement",
		"transforms.route.negate", "transforms.route.predicate"}) {
		t.Errorf("keys %q", got)
	}
	for key, errs := range map[string][]string{
		"transforms.route.type":        {"Config 'transforms.route.negate' was provided but there is no config 'transforms.route.predicate' defining a predicate to be negated."},
		"transforms.route.replacement": {`Missing required configuration "transforms.route.replacement" which has no default value.`},
		"transforms.bad.type": {"Invalid value com.example.Nope for configuration transforms.bad.type: Class com.example.Nope could not be found.",
			"Invalid value null for configuration transforms.bad.type: Not a Transformation"},
		"transforms.none.type": {`Missing required configuration "transforms.none.type" which has no default value.`,
			"Invalid value null for configuration transforms.none.type: Not a Transformation"},
		"predicates.p.type":    nil,
		"predicates.p.pattern": {`Missing required configuration "predicates.p.pattern" which has no default value.`},
	} {
		if got := m[key].Value.Errors; !slices.Equal(got, errs) {
			t.Errorf("%s errors\n got %q\nwant %q", key, got, errs)
		}
	}
	if e := m["transforms.route.regex"].Value.Errors; len(e) != 1 || !strings.HasPrefix(e[0], "Invalid value ( for configuration regex: ") {
		t.Errorf("the plugin's own check: %q", e)
	}
	d := m["transforms.route.type"].Definition
	if d.Type != "CLASS" || !d.Required || *d.Group != "Transforms: route" || d.Order != 0 || d.DisplayName != "Transformation type for route" ||
		d.Documentation != "Class for the 'route' transformation." {
		t.Errorf("type definition %+v", d)
	}
	if v := m["transforms.route.type"].Value; *v.Value != "org.apache.kafka.connect.transforms.RegexRouter" ||
		!slices.Contains(v.RecommendedValues, "org.apache.kafka.connect.transforms.RegexRouter") || slices.Contains(v.RecommendedValues, "org.apache.kafka.connect.transforms.predicates.HasHeaderKey") {
		t.Errorf("type value %+v", v)
	}
	if d := m["transforms.route.negate"].Definition; *d.Group != "Transforms: route" || d.Order != 3 || *d.DefaultValue != "false" {
		t.Errorf("negate definition %+v", d)
	}
	for _, g := range []string{"Transforms: route", "Transforms: bad", "Transforms: none", "Predicates: p"} {
		if !slices.Contains(infos.Groups, g) {
			t.Errorf("groups %q lack %q", infos.Groups, g)
		}
	}
}

func TestPasswordValuesAreHidden(t *testing.T) {
	k := &configKey{ConfigKeyInfo: connect.ConfigKeyInfo{Name: "secret", Type: "PASSWORD", Required: true}}
	if v := k.value("secret", map[string]string{"secret": "hunter2"}); v.Value == nil || *v.Value != "[hidden]" || len(v.Errors) != 0 {
		t.Errorf("%+v", v)
	}
	if v := k.value("secret", nil); v.Value != nil || len(v.Errors) != 1 {
		t.Errorf("missing: %+v", v)
	}
	// A plugin's key whose name says it is a password is hidden as the SDK hides it, in the value
	// and in the message of a value that does not parse.
	k = &configKey{ConfigKeyInfo: connect.ConfigKeyInfo{Name: "db.password", Type: "INT"}}
	v := k.value("db.password", map[string]string{"db.password": "hunter2"})
	if want := "Invalid value [hidden] for configuration db.password: Not a number of type INT"; len(v.Errors) != 1 || v.Errors[0] != want {
		t.Errorf("bad password value: %q, want %q", v.Errors, want)
	}
	if v := k.value("db.password", map[string]string{"db.password": "42"}); v.Value == nil || *v.Value != "[hidden]" {
		t.Errorf("password value shown: %+v", v)
	}
}

func TestFrameworkConfig(t *testing.T) {
	w := testWorker(t, Config{})
	sink := w.FrameworkConfig(connect.TypeSink)
	if len(sink) != 20 || sink[0].Name != "name" || sink[19].Name != "errors.deadletterqueue.context.headers.enable" {
		t.Errorf("sink keys: %d", len(sink))
	}
	src := w.FrameworkConfig(connect.TypeSource)
	last := src[len(src)-1]
	if len(src) != 20 || last.Name != "offsets.storage.topic" || *last.Group != "offsets.topic" || last.DefaultValue != nil || last.Required {
		t.Errorf("source keys: %d, last %+v", len(src), last)
	}
	for _, k := range append(sink, src...) {
		if k.Group == nil || k.Documentation == "" || k.DisplayName == "" || k.Width == "" || k.Importance == "" {
			t.Errorf("incomplete definition %+v", k)
		}
		if k.Required != (k.DefaultValue == nil && (k.Name == "name" || k.Name == "connector.class")) {
			t.Errorf("%s: required %v with default %v", k.Name, k.Required, k.DefaultValue)
		}
	}
}

// Placeholders are resolved before validation, as Kafka Connect does, but answered as given, so a
// secret never appears in the validation result.
func TestValidateResolvesConfigProviders(t *testing.T) {
	t.Setenv("WASMCONNECT_TEST_BATCH", "100")
	providers, err := configprovider.New([]config.Provider{{Name: "env", Class: "org.apache.kafka.common.config.provider.EnvVarConfigProvider"}})
	if err != nil {
		t.Fatal(err)
	}
	w := testWorker(t, Config{Worker: &config.Worker{
		GroupID: "connect-cluster", KeyConverter: "StringConverter", ValueConverter: "StringConverter",
	}, Providers: providers})
	infos, _, err := w.ValidateConfig(context.Background(), map[string]string{
		"name": "src", "connector.class": "FileStreamSource", "file": "/f", "topic": "t",
		"batch.size": "${env:WASMCONNECT_TEST_BATCH}",
	})
	if err != nil {
		t.Fatal(err)
	}
	m := byName(t, infos)
	if errs := m["batch.size"].Value.Errors; len(errs) > 0 {
		t.Fatalf("a placeholder resolving to an INT was refused: %q", errs)
	}
	if got := value(m["batch.size"]); got != "${env:WASMCONNECT_TEST_BATCH}" {
		t.Fatalf("value shown as %q, want the placeholder", got)
	}
}

// A config the tasks would not honour is refused when it is validated, not accepted and failed
// (or ignored) when a task starts: a transformation's predicate must be an alias declared in
// predicates, and header.converter must be the header converter the tasks use.
func TestValidateRefusesWhatTasksWouldNotHonour(t *testing.T) {
	w := testWorker(t, Config{})
	base := func(extra map[string]string) map[string]string {
		cfg := map[string]string{
			"name": "s", "connector.class": "FileStreamSink", "topics": "t", "file": testDataDir + "/out",
			"transforms": "drop", "transforms.drop.type": "Filter",
			"predicates": "tomb", "predicates.tomb.type": "RecordIsTombstone",
		}
		maps.Copy(cfg, extra)
		return cfg
	}
	for _, tc := range []struct {
		extra map[string]string
		key   string // "" = no error
		want  string
	}{
		{map[string]string{"transforms.drop.predicate": "tomb"}, "", ""},
		{map[string]string{"transforms.drop.predicate": "nope"}, "transforms.drop.predicate",
			"Invalid value nope for configuration transforms.drop.predicate: no predicate with that alias is declared in predicates"},
		{map[string]string{"transforms.drop.predicate": "tomb", "predicates": ""}, "transforms.drop.predicate",
			"Invalid value tomb for configuration transforms.drop.predicate: no predicate with that alias is declared in predicates"},
		{map[string]string{"header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter"}, "", ""},
		{map[string]string{"header.converter": "SimpleHeaderConverter"}, "", ""},
		{map[string]string{"header.converter": "com.example.NopeHeaderConverter"}, "header.converter",
			"Invalid value class com.example.NopeHeaderConverter for configuration header.converter: Not a HeaderConverter this worker honours"},
		{map[string]string{"header.converter": "org.apache.kafka.connect.json.JsonConverter"}, "header.converter",
			"Invalid value class org.apache.kafka.connect.json.JsonConverter for configuration header.converter: Not a HeaderConverter this worker honours"},
	} {
		cfg := base(tc.extra)
		infos, _, err := w.ValidateConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		_, createErr := w.Validate(context.Background(), cfg)
		if tc.key == "" {
			if infos.ErrorCount != 0 || createErr != nil {
				t.Errorf("%v: %d errors (%v), want none", tc.extra, infos.ErrorCount, createErr)
			}
			continue
		}
		errs := byName(t, infos)[tc.key].Value.Errors
		if infos.ErrorCount != 1 || len(errs) != 1 || !strings.HasPrefix(errs[0], tc.want) {
			t.Errorf("%v: %d errors, %s: %q, want %q", tc.extra, infos.ErrorCount, tc.key, errs, tc.want)
		}
		var ce *connect.Error
		if !errors.As(createErr, &ce) || ce.Code != 400 || !strings.Contains(ce.Message, tc.want) {
			t.Errorf("%v: create answers %v, want a 400 with %q", tc.extra, createErr, tc.want)
		}
	}
}

// negate is a BOOLEAN as Kafka parses one: "true" or "false" in any case, not Go's "1" or "t".
func TestTransformNegateIsKafkasBoolean(t *testing.T) {
	w := testWorker(t, Config{})
	cfg := map[string]string{
		"transforms": "route", "transforms.route.type": "RegexRouter", "transforms.route.predicate": "p",
		"predicates": "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
	}
	cfg["transforms.route.negate"] = "TRUE"
	if specs, err := w.transformSpecs(cfg); err != nil || len(specs) != 1 || !specs[0].negate {
		t.Fatalf("negate=TRUE: %v %v", specs, err)
	}
	cfg["transforms.route.negate"] = "1"
	_, err := w.transformSpecs(cfg)
	if want := "Invalid value 1 for configuration transforms.route.negate: Expected value to be either true or false"; err == nil || err.Error() != want {
		t.Errorf("negate=1: %v, want %s", err, want)
	}
}

// TestValidateClientOverrides checks a connector's client overrides as create and validate do
// (Kafka's validateClientOverrides): under connector.client.config.override.policy, per client of
// the connector's type, and for their values.
func TestValidateClientOverrides(t *testing.T) {
	worker := func(policy string) *Worker {
		clients, err := kafkaclient.NewClients(config.Kafka{OverridePolicy: policy})
		if err != nil {
			t.Fatal(err)
		}
		return testWorker(t, Config{Worker: &config.Worker{
			KeyConverter: "StringConverter", ValueConverter: "StringConverter",
		}, Clients: clients})
	}
	source := map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": "/f", "topic": "t",
		"producer.override.compression.type": "zstd", "producer.override.sasl.mechanism": "PLAIN",
		"consumer.override.fetch.max.bytes": "1"} // not a source's client: not checked, as in Kafka
	sink := map[string]string{"name": "snk", "connector.class": "FileStreamSink", "file": "/f", "topics": "t",
		"consumer.override.max.poll.records": "none", "producer.override.acks": "2"} // no dead letter queue: no producer
	for _, tc := range []struct {
		policy string
		cfg    map[string]string
		want   map[string]string // key -> error
	}{
		{"None", source, map[string]string{
			"producer.override.compression.type": "The 'None' policy does not allow 'compression.type' to be overridden in the connector configuration.",
			"producer.override.sasl.mechanism":   "The 'None' policy does not allow 'sasl.mechanism' to be overridden in the connector configuration.",
		}},
		{"Principal", source, map[string]string{
			"producer.override.compression.type": "The 'Principal' policy does not allow 'compression.type' to be overridden in the connector configuration.",
		}},
		{"All", source, map[string]string{}},
		{"", sink, map[string]string{"consumer.override.max.poll.records": `invalid value "none" for consumer.override.max.poll.records: not an integer`}},
		{"", merged(sink, map[string]string{"errors.deadletterqueue.topic.name": "dlq"}), map[string]string{
			"consumer.override.max.poll.records": `invalid value "none" for consumer.override.max.poll.records: not an integer`,
			"producer.override.acks":             `invalid value "2" for producer.override.acks: want all, -1, 0 or 1`,
		}},
	} {
		infos, _, err := worker(tc.policy).ValidateConfig(context.Background(), tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, ci := range infos.Configs {
			if ci.Value != nil && strings.Contains(ci.Value.Name, ".override.") && len(ci.Value.Errors) > 0 {
				got[ci.Value.Name] = strings.Join(ci.Value.Errors, "; ")
			}
		}
		if !maps.Equal(got, tc.want) || infos.ErrorCount != len(tc.want) {
			t.Errorf("policy %q, %v:\n errors %v (count %d)\n want %v", tc.policy, tc.cfg, got, infos.ErrorCount, tc.want)
		}
	}
}

// The topics a worker creates for a connector (its own offsets topic, a sink's dead letter queue)
// must be legal names and none of the worker's internal topics.
func TestValidateCreatedTopics(t *testing.T) {
	wc := &config.Worker{GroupID: "connect-cluster", KeyConverter: "org.apache.kafka.connect.storage.StringConverter",
		ValueConverter: "org.apache.kafka.connect.storage.StringConverter", Topics: config.InternalTopics{
			Config:  config.Topic{Name: "connect-configs", Key: "config.storage.topic"},
			Offsets: config.Topic{Name: "connect-offsets", Key: "offset.storage.topic"},
			Status:  config.Topic{Name: "connect-status", Key: "status.storage.topic"}}}
	w := testWorker(t, Config{Worker: wc})
	source := map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": "/x", "topic": "t"}
	sink := map[string]string{"name": "snk", "connector.class": "FileStreamSink", "file": "/x", "topics": "t"}
	for _, tc := range []struct {
		base      map[string]string
		key, val  string
		wantError string // "" = valid
	}{
		{source, "offsets.storage.topic", "connect-configs", "Invalid value connect-configs for configuration offsets.storage.topic: it is the worker's config.storage.topic, not a connector's to write to"},
		{source, "offsets.storage.topic", "connect-status", "Invalid value connect-status for configuration offsets.storage.topic: it is the worker's status.storage.topic, not a connector's to write to"},
		{source, "offsets.storage.topic", "bad topic!", `Invalid value bad topic! for configuration offsets.storage.topic: topic name "bad topic!" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`},
		{source, "offsets.storage.topic", "connect-offsets", ""}, // the worker's own store
		{source, "offsets.storage.topic", "src-offsets", ""},
		{sink, "errors.deadletterqueue.topic.name", "connect-offsets", "Invalid value connect-offsets for configuration errors.deadletterqueue.topic.name: it is the worker's offset.storage.topic, not a connector's to write to"},
		{sink, "errors.deadletterqueue.topic.name", "..", `Invalid value .. for configuration errors.deadletterqueue.topic.name: topic name cannot be "." or ".."`},
		{sink, "errors.deadletterqueue.topic.name", "snk-dlq", ""},
	} {
		infos, _, err := w.ValidateConfig(context.Background(), merged(tc.base, map[string]string{tc.key: tc.val}))
		if err != nil {
			t.Fatal(err)
		}
		got := byName(t, infos)[tc.key].Value.Errors
		if tc.wantError == "" && len(got) > 0 || tc.wantError != "" && !slices.Equal(got, []string{tc.wantError}) {
			t.Errorf("%s=%q: errors %q, want %q", tc.key, tc.val, got, tc.wantError)
		}
	}
}
