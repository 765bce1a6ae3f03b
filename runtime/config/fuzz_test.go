package config

import "testing"

// A worker's .properties file is read with Java's Properties rules (escapes, continuations,
// \uXXXX); no file may panic the reader or the settings parser.
func FuzzParseProperties(f *testing.F) {
	f.Add([]byte("bootstrap.servers=a:9092\ngroup.id = g\\\n  roup\nkey\\:x=\\u00e9\n# comment\n! other\nempty\n"))
	f.Add([]byte("listeners=http://:8083,https://h:8443\nplugin.call.timeout.ms=abc\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		props, err := ParseProperties(b)
		if err != nil {
			return
		}
		Parse("fuzz.properties", props, Distributed)
		Parse("fuzz.properties", props, Standalone)
	})
}
