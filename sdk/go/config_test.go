package sdk

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestConfigHelpers(t *testing.T) {
	c := Config{"s": "x", "i": " 42 ", "big": "3000000000", "b": "TRUE", "bad": "nope", "l": " a, b ,c", "empty": "", "f": "1.5"}
	if c.String("s", "d") != "x" || c.String("missing", "d") != "d" {
		t.Error("String")
	}
	if n, err := c.Int("i", 0); n != 42 || err != nil {
		t.Errorf("Int = %d %v", n, err)
	}
	if n, err := c.Int("missing", 7); n != 7 || err != nil {
		t.Errorf("Int default = %d %v", n, err)
	}
	if _, err := c.Int("big", 0); err == nil || err.Error() != "Invalid value 3000000000 for configuration big: Not a number of type INT" {
		t.Errorf("Int out of range: %v", err)
	}
	if n, err := c.Int64("big", 0); n != 3000000000 || err != nil {
		t.Errorf("Int64 = %d %v", n, err)
	}
	if _, err := c.Int64("bad", 0); err == nil || !strings.Contains(err.Error(), "Not a number of type LONG") {
		t.Errorf("Int64 bad: %v", err)
	}
	if f, err := c.Float64("f", 0); f != 1.5 || err != nil {
		t.Errorf("Float64 = %v %v", f, err)
	}
	if b, err := c.Bool("b", false); !b || err != nil {
		t.Errorf("Bool = %v %v", b, err)
	}
	if _, err := c.Bool("bad", false); err == nil || err.Error() != "Invalid value nope for configuration bad: Expected value to be either true or false" {
		t.Errorf("Bool bad: %v", err)
	}
	if l := c.List("l", nil); !reflect.DeepEqual(l, []string{"a", "b", "c"}) {
		t.Errorf("List = %q", l)
	}
	if l := c.List("empty", nil); l == nil || len(l) != 0 {
		t.Errorf("List empty = %q", l)
	}
	if l := c.List("missing", []string{"d"}); !reflect.DeepEqual(l, []string{"d"}) {
		t.Errorf("List default = %q", l)
	}
	cl := c.Clone()
	cl["s"] = "changed"
	if c["s"] != "x" {
		t.Error("Clone shares the map")
	}
}

func TestCheckConfig(t *testing.T) {
	defs := []ConfigDef{
		{Name: "req", Required: true},
		{Name: "int", Type: TypeInt},
		{Name: "short", Type: TypeShort},
		{Name: "long", Type: TypeLong},
		{Name: "double", Type: TypeDouble},
		{Name: "bool", Type: TypeBoolean},
		{Name: "fmt", Validator: OneOfIgnoreCase("BASE64", "NUMERIC")},
		{Name: "secret.password", Type: TypePassword, Validator: func(v string) error {
			if len(v) < 3 {
				return errors.New("too short")
			}
			return nil
		}},
	}
	if errs := checkConfig(defs, Config{"req": "", "int": "-5", "short": "300", "long": "9000000000", "double": "1e3", "bool": "False", "fmt": "numeric", "secret.password": "abcd"}); errs != nil {
		t.Errorf("valid config: %v", errs)
	}
	got := checkConfig(defs, Config{"int": "1.5", "short": "40000", "long": "x", "double": "y", "bool": "1", "fmt": "hex", "secret.password": "ab"})
	want := map[string][]string{
		"req":             {`Missing required configuration "req" which has no default value.`},
		"int":             {"Invalid value 1.5 for configuration int: Not a number of type INT"},
		"short":           {"Invalid value 40000 for configuration short: Not a number of type SHORT"},
		"long":            {"Invalid value x for configuration long: Not a number of type LONG"},
		"double":          {"Invalid value y for configuration double: Not a number of type DOUBLE"},
		"bool":            {"Invalid value 1 for configuration bool: Expected value to be either true or false"},
		"fmt":             {"Invalid value hex for configuration fmt: String must be one of (case insensitive): BASE64, NUMERIC"},
		"secret.password": {"Invalid value [hidden] for configuration secret.password: too short"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %v\nwant %v", got, want)
	}
	cfg := withDefaults([]ConfigDef{{Name: "a", Default: new("1")}, {Name: "b", Default: new("")}, {Name: "c"}, {Name: "d", Required: true, Default: new("x")}},
		map[string]string{"a": "set"})
	if !reflect.DeepEqual(cfg, Config{"a": "set", "b": ""}) {
		t.Errorf("withDefaults = %v", cfg)
	}
}

func TestCheckPathAndOpenFile(t *testing.T) {
	dir := t.TempDir()
	ctx := NewTaskContext("c", 0, dir+"/")
	if err := os.WriteFile(filepath.Join(dir, "in.txt"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ctx.OpenFile(filepath.Join(dir, "sub", "..", "in.txt"), os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ctx.OpenFile("/etc/passwd", os.O_RDONLY, 0)
	if err == nil || err.Error() != `plugin.fs.allow does not grant access to "/etc/passwd" (granted: `+dir+`)` || !errors.Is(err, fs.ErrPermission) {
		t.Errorf("outside: %v", err)
	}
	if _, err := ctx.OpenFile(dir+"/../escape", os.O_RDONLY, 0); err == nil || !strings.Contains(err.Error(), "does not grant access") {
		t.Errorf("dot-dot escape: %v", err)
	}
	if _, err := ctx.OpenFile(dir+"x/in.txt", os.O_RDONLY, 0); err == nil || !strings.Contains(err.Error(), "does not grant access") {
		t.Errorf("sibling with the same prefix: %v", err)
	}
	missing := filepath.Join(dir, "missing.txt")
	_, err = ctx.OpenFile(missing, os.O_RDONLY, 0)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing: %v", err)
	}
	none := NewTaskContext("c", 0)
	if _, err := none.CheckPath("/data/x"); err == nil || err.Error() != `plugin.fs.allow does not grant access to "/data/x" (granted: none)` {
		t.Errorf("no grants: %v", err)
	}
}
