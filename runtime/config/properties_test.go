package config

import (
	"reflect"
	"testing"
)

func TestParseProperties(t *testing.T) {
	in := "# comment\n! also\n  bootstrap.servers=localhost:9092\n" +
		"group.id : connect-cluster\nkey.converter org.apache.kafka.connect.json.JsonConverter\n" +
		"plugin.path=/a,\\\n    /b\nescaped\\=key=v\\u00e9\nempty=\n"
	got, err := ParseProperties([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"bootstrap.servers": "localhost:9092",
		"group.id":          "connect-cluster",
		"key.converter":     "org.apache.kafka.connect.json.JsonConverter",
		"plugin.path":       "/a,/b",
		"escaped=key":       "vé",
		"empty":             "",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

func TestParsePropertiesBadEscape(t *testing.T) {
	if _, err := ParseProperties([]byte("a=\\uZZZZ\n")); err == nil {
		t.Fatal("expected an error for a malformed unicode escape")
	}
}
