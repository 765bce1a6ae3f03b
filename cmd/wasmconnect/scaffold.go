package main

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"unicode"
)

// templates holds one directory per language that wasmconnect plugin new writes: every file is a
// text/template (named with .tmpl, so that Go tooling never takes a template for code) over
// skeletonData. Adding a language is adding its directory: a plugin that builds with `make`, tests
// with `make test`, and checks with `make check`.
//
//go:embed all:templates
var templates embed.FS

// skeletonData is what the templates see.
type skeletonData struct {
	Name   string // the plugin's directory and module file name, as given: my-upper
	Camel  string // its plugin name: MyUpper
	Ident  string // an identifier of the language: my_upper
	Class  string // its class, com.example.MyUpper unless --class says
	Module string // the Go module path, example.com/my-upper unless --module says
	SDK    string // the sdk directory of a wasmconnect checkout, relative to the plugin's directory
}

// templateLangs lists the languages there are templates for.
func templateLangs() []string {
	entries, _ := templates.ReadDir("templates")
	var langs []string
	for _, e := range entries {
		if e.IsDir() {
			langs = append(langs, e.Name())
		}
	}
	return langs
}

var pluginName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

func runPluginNew(_ context.Context, args []string) error {
	fs := newFlags("plugin new")
	lang := fs.String("lang", "", "the plugin's language: "+strings.Join(templateLangs(), ", "))
	dir := fs.String("dir", "", "where to write it (default: ./NAME)")
	sdkDir := fs.String("sdk", "", "the sdk directory of a wasmconnect checkout (default: found above the working directory)")
	class := fs.String("class", "", "the plugin's class (default: com.example.CamelName)")
	module := fs.String("module", "", "the Go module path (default: example.com/NAME)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmconnect plugin new --lang "+strings.Join(templateLangs(), "|")+" NAME [--dir DIR] [--sdk DIR] [--class CLASS] [--module PATH]")
		fs.PrintDefaults()
	}
	var names []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(names) != 1 {
		fs.Usage()
		return fmt.Errorf("want one NAME, got %d", len(names))
	}
	name := names[0]
	if !pluginName.MatchString(name) {
		return fmt.Errorf("plugin name %q: use lower-case letters, digits and dashes, starting with a letter (it names the directory and the .wasm file)", name)
	}
	if !slices.Contains(templateLangs(), *lang) {
		return fmt.Errorf("--lang %q: the languages with a template are %s", *lang, strings.Join(templateLangs(), ", "))
	}
	out := *dir
	if out == "" {
		out = name
	}
	if _, err := os.Stat(out); err == nil {
		return fmt.Errorf("%s already exists; plugin new writes a new directory", out)
	}
	sdk, err := findSDK(*sdkDir)
	if err != nil {
		return err
	}
	absOut, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	// Relative when the plugin sits near the checkout (it then moves with both), absolute otherwise.
	if rel, err := filepath.Rel(absOut, sdk); err == nil && !strings.HasPrefix(rel, "../../../") {
		sdk = rel
	}
	d := skeletonData{Name: name, Camel: camel(name), Ident: strings.ReplaceAll(name, "-", "_"), Class: *class, Module: *module, SDK: filepath.ToSlash(sdk)}
	if d.Class == "" {
		d.Class = "com.example." + d.Camel
	}
	if d.Module == "" {
		d.Module = "example.com/" + name
	}
	written, err := writeSkeleton(path.Join("templates", *lang), out, d)
	if err != nil {
		return err
	}
	fmt.Printf("wrote a %s plugin, %s (%s), to %s: %s\nnext: cd %s && make test && make && make check\n",
		*lang, d.Camel, d.Class, out, strings.Join(written, ", "), out)
	return nil
}

// camel turns my-upper into MyUpper.
func camel(name string) string {
	var b strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part == "" {
			continue
		}
		r := []rune(part)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// findSDK returns the absolute sdk directory of a wasmconnect checkout: dir, or the first one
// above the working directory. The SDKs are not published yet, so a skeleton builds against one.
func findSDK(dir string) (string, error) {
	isSDK := func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "ABI.md"))
		return err == nil
	}
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		if !isSDK(abs) {
			return "", fmt.Errorf("--sdk %s: not the sdk directory of a wasmconnect checkout (no ABI.md there)", dir)
		}
		return abs, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isSDK(filepath.Join(d, "sdk")) {
			return filepath.Join(d, "sdk"), nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no wasmconnect checkout above the working directory: name its sdk directory with --sdk (the SDKs are not published yet)")
		}
	}
}

// writeSkeleton renders every template under root into out, dropping the .tmpl suffix.
func writeSkeleton(root, out string, d skeletonData) ([]string, error) {
	var written []string
	err := fs.WalkDir(templates, root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
		t, err := template.ParseFS(templates, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		f, err := os.Create(dst)
		if err != nil {
			return err
		}
		if err := t.Execute(f, d); err != nil {
			f.Close()
			return fmt.Errorf("%s: %w", p, err)
		}
		written = append(written, rel)
		return f.Close()
	})
	return written, err
}
