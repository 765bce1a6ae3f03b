package config

import (
	"strings"
	"testing"
)

func TestParseInternalTopics(t *testing.T) {
	w, err := Parse("w.properties", merged(map[string]string{
		"config.storage.topic":              "connect-configs",
		"config.storage.partitions":         "7", // ignored, as in Java
		"config.storage.replication.factor": "-1",
		"config.storage.cleanup.policy":     "delete", // ignored, as in Java
		"offset.storage.topic":              "connect-offsets",
		"offset.storage.partitions":         "10",
		"offset.storage.segment.bytes":      "1000000",
		"offset.storage.file.filename":      "offsets.json", // a standalone worker's, not a topic config
		"status.storage.topic":              "connect-status",
	}), Distributed)
	if err != nil {
		t.Fatal(err)
	}
	got := w.Topics
	if c := got.Config; c.Name != "connect-configs" || c.Partitions != 1 || c.ReplicationFactor != -1 || len(c.Configs) != 0 || c.Key != "config.storage.topic" {
		t.Errorf("config topic %+v", c)
	}
	if o := got.Offsets; o.Partitions != 10 || o.ReplicationFactor != 3 || len(o.Configs) != 1 || o.Configs["segment.bytes"] != "1000000" {
		t.Errorf("offset topic %+v", o)
	}
	if s := got.Status; s.Name != "connect-status" || s.Partitions != 5 || s.ReplicationFactor != 3 {
		t.Errorf("status topic %+v", s)
	}

	_, err = Parse("w.properties", merged(map[string]string{"offset.storage.partitions": "x", "status.storage.replication.factor": "0", "config.storage.topic": ""}), Distributed)
	for _, want := range []string{
		"w.properties: missing required setting config.storage.topic",
		`w.properties: worker property offset.storage.partitions="x": want a positive integer`,
		`w.properties: worker property status.storage.replication.factor="0"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\ndoes not contain %q", err, want)
		}
	}
}

// The REST settings' errors that need no file: they stop the worker before it binds a port.
// (The files themselves are loaded by package rest, whose tests check those errors.)
func TestParseRESTErrors(t *testing.T) {
	https := map[string]string{"listeners": "https://:8443", KeyCertificateLocation: "c.pem", KeyKeyLocation: "k.pem"}
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"https without certificate", map[string]string{"listeners": "https://:8443"}, "an https listener needs " + KeyCertificateLocation},
		{"java keystore", map[string]string{"listeners": "https://:8443", KeyKeystoreLocation: "/x.jks"}, "Java keystores are not supported"},
		{"keystore and files", merged(https, map[string]string{KeyKeystoreLocation: "/x.pem", KeyKeystoreType: "PEM"}), "not both"},
		{"java truststore", merged(https, map[string]string{KeyTruststoreLocation: "/t.jks"}), "Java truststores are not supported"},
		{"key password", merged(https, map[string]string{KeyKeyPassword: "x"}), "encrypted private keys are not supported"},
		{"client auth without CA", merged(https, map[string]string{KeyClientAuthentication: "required"}), "needs " + KeyCALocation},
		{"client auth value", merged(https, map[string]string{KeyClientAuthentication: "maybe"}), "must be none, requested or required"},
		{"bad boolean", map[string]string{"topic.tracking.enable": "yes"}, `invalid value "yes" for topic.tracking.enable: must be true or false`},
		{"anonymous without users", map[string]string{KeyAnonymousRead: "true"}, "needs " + KeyBasicAuthFile},
	} {
		if _, err := Parse("w.properties", merged(tc.props), Distributed); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// An http listener ignores the TLS settings, as Kafka does.
	w, err := Parse("w.properties", merged(map[string]string{"listeners": "http://:8083", KeyCertificateLocation: "/nope"}), Distributed)
	if err != nil || w.REST.TLS != nil {
		t.Errorf("http listener: %+v %v", w, err)
	}
	w, err = Parse("w.properties", merged(https, map[string]string{KeyTruststoreType: "pem", KeyTruststoreLocation: "ca.pem", KeyClientAuthentication: "Required"}), Distributed)
	if err != nil || *w.REST.TLS != (RESTTLS{CertFile: "c.pem", KeyFile: "k.pem", CAFile: "ca.pem", CAKey: KeyTruststoreLocation, ClientAuth: "required"}) {
		t.Errorf("https listener: %+v %v", w.REST.TLS, err)
	}
}

func TestParseReconcile(t *testing.T) {
	w, err := Parse("w.properties", merged(map[string]string{"connectors.prune": "true", "connectors.drift": "REPORT", "connectors.owner": "team"}), Distributed)
	if err != nil || w.Reconcile != (Reconcile{Owner: "team", Prune: true, Drift: "report"}) {
		t.Fatal(w.Reconcile, err)
	}
	_, err = Parse("w.properties", merged(map[string]string{"connectors.drift": "ignore", "connectors.prune": "maybe"}), Distributed)
	for _, want := range []string{`invalid value "ignore" for connectors.drift: expected revert or report`, `invalid value "maybe" for connectors.prune: expected true or false`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}

func TestParseProviders(t *testing.T) {
	w, err := Parse("w.properties", merged(map[string]string{
		"config.providers": "env, file", "config.providers.env.class": "EnvVarConfigProvider",
		"config.providers.file.class": "file", "config.providers.file.param.allowed.paths": "/etc/secrets",
	}), Distributed)
	if err != nil || len(w.Providers) != 2 || w.Providers[1].Params["allowed.paths"] != "/etc/secrets" || w.Providers[0].Class != "EnvVarConfigProvider" {
		t.Fatal(w.Providers, err)
	}
	_, err = Parse("w.properties", merged(map[string]string{"config.providers": "x"}), Distributed)
	if err == nil || !strings.Contains(err.Error(), `config.providers lists "x" but config.providers.x.class is not set`) {
		t.Fatal(err)
	}
}

func TestParseClusterProtocol(t *testing.T) {
	if _, err := Parse("w.properties", merged(map[string]string{"connect.protocol": "cooperative"}), Distributed); err == nil ||
		!strings.Contains(err.Error(), `invalid value "cooperative" for connect.protocol: must be eager, compatible or sessioned`) {
		t.Fatal(err)
	}
	w, err := Parse("w.properties", merged(map[string]string{"value.converter.schemas.enable": "false ", "value.converter.password": "x"}), Distributed)
	if err != nil || w.Cluster.Protocol != "sessioned" || w.Cluster.Shared["value.converter.schemas.enable"] != "false" || w.Cluster.Shared["value.converter.password"] != "" {
		t.Fatal(w.Cluster, err)
	}
}
