package config

import (
	"maps"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// parsed is the outcome of parsing a config: the Worker without its warnings, or the error.
func parsed(t *testing.T, props map[string]string) any {
	t.Helper()
	w, err := Parse("w.properties", props, Distributed)
	if err != nil {
		return err.Error()
	}
	w.Warnings = nil
	return *w
}

func merged(ms ...map[string]string) map[string]string {
	out := sample()
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}

// Every declared key that is not ignored is read: setting it changes what Parse returns (the
// Worker, or an error). The table must have a line for each key, so a key added to a part's list
// without its parse line fails here.
func TestEveryKeyIsRead(t *testing.T) {
	dir := t.TempDir()
	https := map[string]string{"listeners": "https://:8443", KeyCertificateLocation: "c.pem", KeyKeyLocation: "k.pem"}
	withCA := merged(https, map[string]string{KeyCALocation: "ca.pem"})
	providers := map[string]string{"config.providers": "env", "config.providers.env.class": "env"}
	type change struct{ base, set map[string]string }
	set := func(kv ...string) change {
		c := change{set: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			c.set[kv[i]] = kv[i+1]
		}
		return c
	}
	on := func(base map[string]string, c change) change { c.base = base; return c }
	reads := map[string]change{
		"bootstrap.servers":                       set("bootstrap.servers", "b:9092"),
		"group.id":                                set("group.id", "other"),
		"client.id":                               set("client.id", "me"),
		"default.api.timeout.ms":                  set("default.api.timeout.ms", "1000"),
		"key.converter":                           set("key.converter", "StringConverter"),
		"value.converter":                         set("value.converter", "StringConverter"),
		"key.converter.":                          set("key.converter.x", "1"),
		"value.converter.":                        set("value.converter.x", "1"),
		"header.converter":                        set("header.converter", "SimpleHeaderConverter"),
		"offset.flush.interval.ms":                set("offset.flush.interval.ms", "1"),
		"offset.flush.timeout.ms":                 set("offset.flush.timeout.ms", "1"),
		"task.shutdown.graceful.timeout.ms":       set("task.shutdown.graceful.timeout.ms", "1"),
		"offset.storage.file.filename":            set("offset.storage.file.filename", "offsets.json"),
		"topic.tracking.enable":                   set("topic.tracking.enable", "false"),
		"topic.tracking.allow.reset":              set("topic.tracking.allow.reset", "false"),
		"log.format":                              set("log.format", "json"),
		"metrics.names":                           set("metrics.names", "strimzi"),
		"exactly.once.source.support":             set("exactly.once.source.support", "enabled"),
		"plugin.path":                             set("plugin.path", "/p"),
		"plugin.fs.allow":                         set("plugin.fs.allow", dir),
		"plugin.net.allow":                        set("plugin.net.allow", "127.0.0.1:5432"),
		"plugin.cache.dir":                        set("plugin.cache.dir", "/c"),
		"plugin.memory.max.bytes":                 set("plugin.memory.max.bytes", "65536"),
		"plugin.call.timeout.ms":                  set("plugin.call.timeout.ms", "1"),
		"plugin.cpu.bound":                        set("plugin.cpu.bound", "none"),
		"security.protocol":                       set("security.protocol", "SSL"),
		"sasl.":                                   set("sasl.mechanism", "PLAIN"),
		"ssl.":                                    set("ssl.truststore.type", "PEM"),
		"producer.":                               set("producer.linger.ms", "7"),
		"consumer.":                               set("consumer.fetch.min.bytes", "7"),
		"admin.":                                  set("admin.retries", "7"),
		"connector.client.config.override.policy": set("connector.client.config.override.policy", "None"),
		"config.storage.topic":                    set("config.storage.topic", "c2"),
		"offset.storage.topic":                    set("offset.storage.topic", "o2"),
		"status.storage.topic":                    set("status.storage.topic", "s2"),
		"config.storage.replication.factor":       set("config.storage.replication.factor", "1"),
		"offset.storage.replication.factor":       set("offset.storage.replication.factor", "1"),
		"status.storage.replication.factor":       set("status.storage.replication.factor", "1"),
		"offset.storage.partitions":               set("offset.storage.partitions", "2"),
		"status.storage.partitions":               set("status.storage.partitions", "2"),
		"config.storage.":                         set("config.storage.segment.bytes", "1"),
		"offset.storage.":                         set("offset.storage.segment.bytes", "1"),
		"status.storage.":                         set("status.storage.segment.bytes", "1"),
		"listeners":                               set("listeners", "http://:9000"),
		"rest.host.name":                          on(map[string]string{"listeners": ""}, set("rest.host.name", "h")),
		"rest.port":                               on(map[string]string{"listeners": ""}, set("rest.port", "9000")),
		"rest.advertised.host.name":               set("rest.advertised.host.name", "h"),
		"rest.advertised.port":                    set("rest.advertised.port", "9"),
		"rest.advertised.listener":                set("rest.advertised.listener", "https"),
		KeyCertificateLocation:                    on(https, set(KeyCertificateLocation, "other.pem")),
		KeyKeyLocation:                            on(https, set(KeyKeyLocation, "other.pem")),
		KeyKeystoreType:                           on(merged(https, map[string]string{KeyKeystoreLocation: "ks.pem", KeyCertificateLocation: "", KeyKeyLocation: ""}), set(KeyKeystoreType, "PEM")),
		KeyKeystoreLocation:                       on(merged(https, map[string]string{KeyKeystoreType: "PEM", KeyCertificateLocation: "", KeyKeyLocation: ""}), set(KeyKeystoreLocation, "ks.pem")),
		KeyCALocation:                             on(https, set(KeyCALocation, "ca.pem")),
		KeyTruststoreType:                         on(merged(https, map[string]string{KeyTruststoreLocation: "t.pem"}), set(KeyTruststoreType, "PEM")),
		KeyTruststoreLocation:                     on(merged(https, map[string]string{KeyTruststoreType: "PEM"}), set(KeyTruststoreLocation, "t.pem")),
		KeyClientAuthentication:                   on(withCA, set(KeyClientAuthentication, "required")),
		KeyKeyPassword:                            on(https, set(KeyKeyPassword, "secret")),
		KeyBasicAuthFile:                          set(KeyBasicAuthFile, "users"),
		KeyTokensFile:                             set(KeyTokensFile, "tokens"),
		KeyAnonymousRead:                          on(map[string]string{KeyBasicAuthFile: "users"}, set(KeyAnonymousRead, "true")),
		"connect.protocol":                        set("connect.protocol", "eager"),
		"session.timeout.ms":                      set("session.timeout.ms", "1"),
		"heartbeat.interval.ms":                   set("heartbeat.interval.ms", "1"),
		"rebalance.timeout.ms":                    set("rebalance.timeout.ms", "1"),
		"scheduled.rebalance.max.delay.ms":        set("scheduled.rebalance.max.delay.ms", "1"),
		"worker.sync.timeout.ms":                  set("worker.sync.timeout.ms", "1"),
		"connectors.dir":                          set("connectors.dir", "d"),
		"connectors.owner":                        set("connectors.owner", "o"),
		"connectors.prune":                        set("connectors.prune", "true"),
		"connectors.drift":                        set("connectors.drift", "report"),
		"config.providers":                        set("config.providers", "env", "config.providers.env.class", "env"),
		"config.providers.":                       on(providers, set("config.providers.env.param.allowlist.pattern", "X")),
	}
	for _, k := range Keys() {
		if k.Ignored != "" {
			continue
		}
		c, ok := reads[k.Name]
		if !ok {
			t.Errorf("%s: no line in this test's table", k.Name)
			continue
		}
		delete(reads, k.Name)
		base := merged(c.base)
		before, after := parsed(t, base), parsed(t, merged(base, c.set))
		if reflect.DeepEqual(before, after) {
			t.Errorf("%s: setting %v changes nothing Parse returns", k.Name, c.set)
		}
	}
	for k := range reads {
		t.Errorf("%s: in the table but not declared (or ignored)", k)
	}
}

// A key accepted for compatibility but ignored is named in a warning, and changes nothing else.
func TestIgnoredKeysAreWarned(t *testing.T) {
	https := map[string]string{"listeners": "https://:8443", KeyCertificateLocation: "c.pem", KeyKeyLocation: "k.pem"}
	n := 0
	for _, k := range Keys() {
		if k.Ignored == "" {
			continue
		}
		n++
		name := k.Name
		if k.prefix() {
			name += "ssl.protocol"
		}
		base := merged(https)
		with := merged(base, map[string]string{name: "1"})
		if before, after := parsed(t, base), parsed(t, with); !reflect.DeepEqual(before, after) {
			t.Errorf("%s changes what Parse returns:\n%v\n%v", name, before, after)
		}
		w, err := Parse("w.properties", with, Distributed)
		if err != nil {
			t.Fatal(err)
		}
		want := Warning{Key: name, Msg: name + " is accepted for compatibility but has no effect: " + k.Ignored}
		if !reflect.DeepEqual(w.Warnings, []Warning{want}) {
			t.Errorf("%s: warnings %v, want %v", name, w.Warnings, want)
		}
	}
	if n < 5 {
		t.Fatalf("only %d ignored keys", n)
	}
	// The ones the issue names, word for word.
	w, err := Parse("w.properties", merged(map[string]string{"access.control.allow.origin": "*", "admin.listeners": "http://:9", "worker.unsync.backoff.ms": "5"}), Distributed)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, x := range w.Warnings {
		msgs = append(msgs, x.Msg)
	}
	for _, want := range []string{
		"access.control.allow.origin is accepted for compatibility but has no effect",
		"admin.listeners is accepted for compatibility but has no effect",
		"worker.unsync.backoff.ms is accepted for compatibility but has no effect",
	} {
		if !strings.Contains(strings.Join(msgs, "\n"), want) {
			t.Errorf("warnings %q lack %q", msgs, want)
		}
	}
	if len(w.Kafka.Admin) != 0 {
		t.Errorf("admin.listeners reached the admin client's settings: %v", w.Kafka.Admin)
	}
}

// The README's tables of worker settings list every declared key, and every key they list is
// declared.
func TestREADMEListsEveryKey(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	start, end := strings.Index(readme, "## Worker configuration"), strings.Index(readme, "## Connector configuration")
	if start < 0 || end < start {
		t.Fatal("README has no Worker configuration section")
	}
	section := readme[start:end]
	for _, k := range Keys() {
		want := "`" + k.Name + "`"
		if k.prefix() {
			want = "`" + k.Name + "*`"
		}
		if !strings.Contains(section, want) {
			t.Errorf("README's worker configuration lacks %s", want)
		}
	}
	code := regexp.MustCompile("`([a-z0-9.]+\\.[a-z0-9.*]+)`")
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue // a client table's "producer: `acks`" lines are client keys
		}
		first := strings.SplitN(line[1:], "|", 2)[0]
		for _, m := range code.FindAllStringSubmatch(first, -1) {
			name := strings.TrimSuffix(m[1], "*")
			if _, ok := lookup(name); !ok && byName[name].Name == "" {
				t.Errorf("README lists %s, which no part of the worker declares", m[1])
			}
		}
	}
}
