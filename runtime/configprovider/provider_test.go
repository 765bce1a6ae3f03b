package configprovider

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

func TestRefs(t *testing.T) {
	got := Refs("a ${env:X} b ${file:/etc/x.properties:pw} ${topic} ${directory:/run/s:k:v}")
	want := []Ref{
		{Text: "${env:X}", Provider: "env", Key: "X"},
		{Text: "${file:/etc/x.properties:pw}", Provider: "file", Path: "/etc/x.properties", Key: "pw"},
		{Text: "${directory:/run/s:k:v}", Provider: "directory", Path: "/run/s", Key: "k:v"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%+v", got)
	}
	if HasPlaceholder("${topic}-${timestamp}") {
		t.Fatal("TimestampRouter's format is not a placeholder")
	}
}

// fromWorkerFile builds the providers a worker file with these settings declares, as a worker does.
func fromWorkerFile(props map[string]string) (*Providers, error) {
	props = maps.Clone(props)
	if props == nil {
		props = map[string]string{}
	}
	props["key.converter"], props["value.converter"] = "StringConverter", "StringConverter"
	w, err := config.Parse("w.properties", props, config.Standalone)
	if err != nil {
		return nil, err
	}
	return New(w.Providers)
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	props := filepath.Join(dir, "db.properties")
	os.WriteFile(props, []byte("user=app\npassword=s3cret\n"), 0o600)
	secrets := filepath.Join(dir, "secrets")
	os.Mkdir(secrets, 0o755)
	os.WriteFile(filepath.Join(secrets, "token"), []byte("tok-123"), 0o600)
	t.Setenv("WC_TEST_SECRET", "from-env")

	ps, err := fromWorkerFile(map[string]string{
		"config.providers":                             "env, file,dir",
		"config.providers.env.class":                   "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
		"config.providers.file.class":                  "FileConfigProvider",
		"config.providers.file.param.allowed.paths":    dir,
		"config.providers.dir.class":                   "directory",
		"config.providers.dir.param.allowed.paths":     secrets,
		"config.providers.env.param.allowlist.pattern": "WC_.*",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := ps.Names(); !reflect.DeepEqual(got, []string{"dir", "env", "file"}) {
		t.Fatal(got)
	}
	raw := map[string]string{
		"a":     "${env:WC_TEST_SECRET}",
		"b":     "jdbc:x?u=${file:" + props + ":user}&p=${file:" + props + ":password}",
		"c":     "${dir:" + secrets + ":token}",
		"d":     "${vault:secret/x:y}", // not a provider of this worker: as is
		"plain": "v",
	}
	got, err := ps.Resolve(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "from-env", "b": "jdbc:x?u=app&p=s3cret", "c": "tok-123", "d": "${vault:secret/x:y}", "plain": "v"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%v", got)
	}
	if raw["a"] != "${env:WC_TEST_SECRET}" {
		t.Fatal("the raw config changed")
	}

	for _, tc := range []struct {
		v, want string
	}{
		{"${env:NOT_ALLOWED}", "does not match allowlist.pattern"},
		{"${env:WC_NOT_SET_ANYWHERE}", "WC_NOT_SET_ANYWHERE is not set"},
		{"${file:/etc/passwd:root}", "not under allowed.paths"},
		{"${file:" + props + ":nope}", `has no key "nope"`},
		{"${dir:" + secrets + ":../db.properties}", "expected a file name"},
		{"${file:relative.properties:x}", "expected an absolute path"},
	} {
		_, err := ps.Resolve(map[string]string{"k": tc.v})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.v, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "from-env")) {
			t.Errorf("%s: error shows a secret: %v", tc.v, err)
		}
	}
}

func TestSymlinkOutOfAllowedPaths(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(other, "x.properties"), []byte("k=v\n"), 0o600)
	os.Symlink(filepath.Join(other, "x.properties"), filepath.Join(dir, "link.properties"))
	ps, err := fromWorkerFile(map[string]string{
		"config.providers": "file", "config.providers.file.class": "file", "config.providers.file.param.allowed.paths": dir,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Resolve(map[string]string{"k": "${file:" + dir + "/link.properties:k}"}); err == nil {
		t.Fatal("a link out of allowed.paths was followed")
	}
}

func TestWorkerFileErrors(t *testing.T) {
	for _, props := range []map[string]string{
		{"config.providers": "x"},
		{"config.providers": "x", "config.providers.x.class": "com.example.Vault"},
		{"config.providers": "x", "config.providers.x.class": "file", "config.providers.x.param.allowed.paths": "rel"},
	} {
		if _, err := fromWorkerFile(props); err == nil {
			t.Errorf("%v: no error", props)
		}
	}
	ps, err := fromWorkerFile(nil)
	if err != nil || len(ps.Names()) != 0 {
		t.Fatal(ps, err)
	}
	// Without providers, placeholders stay as they are.
	cfg := map[string]string{"a": "${env:HOME}"}
	if got, err := ps.Resolve(cfg); err != nil || got["a"] != "${env:HOME}" {
		t.Fatal(got, err)
	}
}

func TestUnresolve(t *testing.T) {
	raw := map[string]string{"file": "${env:F}", "topic": "t", "password": "${env:P}"}
	tasks := []map[string]string{{"file": "/resolved", "topic": "t", "batch": "1"}}
	got := Unresolve(raw, tasks)
	if !reflect.DeepEqual(got, []map[string]string{{"file": "${env:F}", "topic": "t", "batch": "1"}}) {
		t.Fatal(got)
	}
	if tasks[0]["file"] != "/resolved" {
		t.Fatal("input changed")
	}
}
