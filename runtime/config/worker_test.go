package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample() map[string]string {
	return map[string]string{
		"bootstrap.servers":              "localhost:9092",
		"group.id":                       "connect-cluster",
		"key.converter":                  "org.apache.kafka.connect.json.JsonConverter",
		"value.converter":                "org.apache.kafka.connect.json.JsonConverter",
		"value.converter.schemas.enable": "false",
		"config.storage.topic":           "connect-configs",
		"offset.storage.topic":           "connect-offsets",
		"status.storage.topic":           "connect-status",
		"listeners":                      "http://127.0.0.1:8083",
		"plugin.path":                    "/opt/a, /opt/b",
	}
}

func TestParseDefaults(t *testing.T) {
	w, err := Parse("w.properties", sample(), Distributed)
	if err != nil {
		t.Fatal(err)
	}
	if w.OffsetFlushInterval != time.Minute || w.Cluster.ScheduledRebalanceMax != DefaultScheduledRebalanceMaxDelay {
		t.Errorf("durations: %v %v", w.OffsetFlushInterval, w.Cluster.ScheduledRebalanceMax)
	}
	if len(w.PluginPath) != 2 || w.PluginPath[1] != "/opt/b" {
		t.Errorf("plugin.path: %q", w.PluginPath)
	}
	if w.ValueConverterProps["schemas.enable"] != "false" {
		t.Errorf("converter props: %v", w.ValueConverterProps)
	}
	if got := w.AdvertisedURL(8083).String(); got != "http://127.0.0.1:8083/" {
		t.Errorf("advertised URL %s", got)
	}
}

func TestParseErrorsNameFileAndKey(t *testing.T) {
	props := sample()
	delete(props, "group.id")
	props["offset.flush.interval.ms"] = "many"
	props["listeners"] = "ftp://x"
	_, err := Parse("w.properties", props, Distributed)
	if err == nil {
		t.Fatal("expected errors")
	}
	for _, want := range []string{
		"w.properties: missing required setting group.id",
		`w.properties: invalid value "many" for offset.flush.interval.ms: not an integer`,
		`invalid value "ftp://x" for listeners`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestStandaloneNeedsNoGroup(t *testing.T) {
	props := sample()
	delete(props, "group.id")
	delete(props, "config.storage.topic")
	if _, err := Parse("s.properties", props, Standalone); err != nil {
		t.Fatal(err)
	}
}

// Client keys (producer.*, consumer.*, admin.*, sasl.*, ssl.*) are the clients': kafkaclient's
// tests check that each reaches the client's options or is a warning naming it
// (kafkaclient.TestClientSettingsReachTheClient, TestProducerSettings, TestWorkerWarnings).
func TestUnknownKeys(t *testing.T) {
	props := sample()
	props["security.protocol"] = "SASL_SSL"
	props["sasl.mechanism"] = "SCRAM-SHA-512"
	props["bogus.key"] = "1"
	w, err := Parse("w.properties", props, Distributed)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Warning{{"bogus.key", UnknownMsg}}; !reflect.DeepEqual(w.Warnings, want) {
		t.Fatalf("warnings %v, want %v", w.Warnings, want)
	}
}

// A granted directory that is missing or is a file is refused when the config is read, before the
// worker binds a port or dials Kafka, in one line that names the setting and the cause.
func TestPluginFSAllowMustBeDirectories(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ allow, want string }{
		{filepath.Join(dir, "missing"), "no such file or directory"},
		{file, "not a directory"},
	} {
		props := sample()
		props["plugin.fs.allow"] = dir + "," + tc.allow
		_, err := Parse("w.properties", props, Distributed)
		if err == nil {
			t.Fatalf("plugin.fs.allow=%s accepted", props["plugin.fs.allow"])
		}
		msg := err.Error()
		if !strings.Contains(msg, "for plugin.fs.allow") || !strings.Contains(msg, tc.allow) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("plugin.fs.allow=%s: error %q, want one line naming the setting, the entry and %q", tc.allow, msg, tc.want)
		}
	}
	props := sample()
	props["plugin.fs.allow"] = dir
	w, err := Parse("w.properties", props, Distributed)
	if err != nil || len(w.PluginFSAllow) != 1 || w.PluginFSAllow[0] != dir {
		t.Fatalf("plugin.fs.allow=%s: %v %v", dir, w, err)
	}
}

func TestPluginNetAllow(t *testing.T) {
	props := map[string]string{"group.id": "g", "config.storage.topic": "c", "offset.storage.topic": "o", "status.storage.topic": "s",
		"key.converter": "k", "value.converter": "v"}
	w, err := Parse("w.properties", props, Distributed)
	if err != nil || !w.PluginNetAllow.Empty() {
		t.Fatalf("without plugin.net.allow: %v, grant %q; want no network", err, w.PluginNetAllow)
	}
	props["plugin.net.allow"] = "127.0.0.1:5432, db.internal:*, 10.0.0.0/8:443"
	if w, err = Parse("w.properties", props, Distributed); err != nil || w.PluginNetAllow.String() != "127.0.0.1:5432, db.internal:*, 10.0.0.0/8:443" {
		t.Fatalf("plugin.net.allow: %v, grant %q", err, w.PluginNetAllow)
	}
	props["plugin.net.allow"] = "127.0.0.1:5432,db.internal"
	_, err = Parse("w.properties", props, Distributed)
	if err == nil || !strings.Contains(err.Error(), `invalid value "127.0.0.1:5432,db.internal" for plugin.net.allow: entry "db.internal": want host:port`) {
		t.Fatalf("bad plugin.net.allow: %v", err)
	}
}

func TestExactlyOnceSourceSupport(t *testing.T) {
	for _, tc := range []struct {
		value string
		mode  Mode
		want  ExactlyOnce
		err   string
	}{
		{"", Distributed, ExactlyOnceDisabled, ""},
		{"Enabled", Distributed, ExactlyOnceEnabled, ""},
		{"preparing", Distributed, ExactlyOncePreparing, ""},
		{"on", Distributed, "", `invalid value "on" for exactly.once.source.support: want disabled, preparing or enabled`},
		{"enabled", Standalone, "", `exactly-once source delivery needs a distributed worker`},
	} {
		props := sample()
		if tc.value != "" {
			props["exactly.once.source.support"] = tc.value
		}
		if tc.mode == Standalone {
			props["offset.storage.file.filename"] = "o"
		}
		w, err := Parse("w.properties", props, tc.mode)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.value, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.value, err)
		case w.ExactlyOnceSource != tc.want:
			t.Errorf("%q: %q, want %q", tc.value, w.ExactlyOnceSource, tc.want)
		}
	}
}

// TestPluginCPUBound: the bound is on unless plugin.cpu.bound=none asks for a worker without it
// (for benchmarks), and a typo fails rather than turning it off.
func TestPluginCPUBound(t *testing.T) {
	for value, noBound := range map[string]bool{"": false, "fuel": false, "None": true} {
		props := sample()
		if value != "" {
			props["plugin.cpu.bound"] = value
		}
		w, err := Parse("w.properties", props, Distributed)
		if err != nil {
			t.Fatalf("plugin.cpu.bound=%q: %v", value, err)
		}
		if w.PluginNoCPUBound != noBound {
			t.Errorf("plugin.cpu.bound=%q: PluginNoCPUBound %v, want %v", value, w.PluginNoCPUBound, noBound)
		}
	}
	props := sample()
	props["plugin.cpu.bound"] = "off"
	const want = `invalid value "off" for plugin.cpu.bound: want fuel (the default) or none`
	if _, err := Parse("w.properties", props, Distributed); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("plugin.cpu.bound=off: error %v, want %q", err, want)
	}
}

// The internal topics are created by the worker itself: a name the broker would refuse, or two
// topics of one name (each reading the other's records as its own), is an error at start.
func TestInternalTopicNames(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"status.storage.topic": "connect-configs"},
			`worker properties config.storage.topic and status.storage.topic both name the topic "connect-configs": the three internal topics must be distinct`},
		{map[string]string{"offset.storage.topic": "connect-status"},
			`worker properties offset.storage.topic and status.storage.topic both name the topic "connect-status"`},
		{map[string]string{"config.storage.topic": "connect configs"},
			`worker property config.storage.topic="connect configs": topic name "connect configs" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`},
		{map[string]string{"offset.storage.topic": ".."}, `worker property offset.storage.topic="..": topic name cannot be "." or ".."`},
		{map[string]string{"status.storage.topic": strings.Repeat("s", 250)}, "it can't be longer than 249 characters"},
	} {
		props := sample()
		for k, v := range tc.set {
			props[k] = v
		}
		_, err := Parse("w.properties", props, Distributed)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.set, err, tc.want)
		}
	}
	for _, name := range []string{"a", "connect-configs", "_connect.Offsets-1", strings.Repeat("x", 249)} {
		if err := CheckTopicName(name); err != nil {
			t.Errorf("CheckTopicName(%q): %v", name, err)
		}
	}
}
