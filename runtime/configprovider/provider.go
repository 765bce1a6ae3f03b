// Package configprovider resolves Kafka config-provider placeholders (KIP-297), ${provider:[path:]key},
// in connector and task configs.
//
// Placeholders stay unresolved in the config topic and in the REST API's answers; a worker
// resolves them only when it hands a config to a plugin (a connector generating task configs, a
// task or converter starting), and puts them back into the task configs a connector generates
// (Unresolve) before they are written. A secret written in HCL as secret("env", "DB_PASSWORD") is
// therefore stored as ${env:DB_PASSWORD} and read from the worker's environment at task start.
//
// The worker's providers are configured as in Kafka Connect:
//
//	config.providers=env,file,directory
//	config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
//	config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
//	config.providers.file.param.allowed.paths=/etc/kafka/secrets
//	config.providers.directory.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
//	config.providers.directory.param.allowed.paths=/run/secrets
//
// Short class names (EnvVarConfigProvider, env, file, directory) are accepted too. The file and
// directory providers read only under allowed.paths when it is set (KIP-993); the env provider
// only variables matching allowlist.pattern when it is set (KIP-887).
//
// A placeholder naming a provider the worker does not configure is left as it is, as Kafka does.
// Unlike Kafka, a configured provider that cannot find the key is an error (the task fails with
// the placeholder named, never a value), rather than the placeholder silently reaching the plugin.
package configprovider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// placeholder is Kafka's ConfigTransformer pattern: ${provider:[path:]key}.
var placeholder = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// Ref is one placeholder.
type Ref struct {
	Text     string // as written, "${file:/etc/x.properties:password}"
	Provider string
	Path     string // "" when the placeholder has none
	Key      string
}

// Refs returns the placeholders in s.
func Refs(s string) []Ref {
	if !strings.Contains(s, "${") {
		return nil
	}
	var out []Ref
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		out = append(out, Ref{Text: m[0], Provider: m[1], Path: m[3], Key: m[4]})
	}
	return out
}

// HasPlaceholder reports whether s holds a placeholder.
func HasPlaceholder(s string) bool { return len(Refs(s)) > 0 }

// HasPlaceholders reports whether any value of cfg holds a placeholder.
func HasPlaceholders(cfg map[string]string) bool {
	for _, v := range cfg {
		if HasPlaceholder(v) {
			return true
		}
	}
	return false
}

// Provider reads keys at a path (Kafka's ConfigProvider.get(path, keys)).
type Provider interface {
	Get(path string, keys []string) (map[string]string, error)
}

// Providers are a worker's config providers by name.
type Providers struct {
	byName map[string]Provider
}

// Kafka's provider classes and their short names.
var classes = map[string]string{
	"org.apache.kafka.common.config.provider.EnvVarConfigProvider":    "env",
	"org.apache.kafka.common.config.provider.FileConfigProvider":      "file",
	"org.apache.kafka.common.config.provider.DirectoryConfigProvider": "directory",
	"EnvVarConfigProvider":    "env",
	"FileConfigProvider":      "file",
	"DirectoryConfigProvider": "directory",
	"env":                     "env",
	"file":                    "file",
	"directory":               "directory",
}

// New builds the providers a worker declares (config.providers and
// config.providers.<name>.class / .param.*), once at start: the worker resolves every task's
// config with them. Without any there are none.
func New(specs []config.Provider) (*Providers, error) {
	ps := &Providers{byName: map[string]Provider{}}
	for _, spec := range specs {
		kind, ok := classes[spec.Class]
		if !ok {
			return nil, fmt.Errorf("%sclass=%s: unknown config provider; expected one of EnvVarConfigProvider, FileConfigProvider, DirectoryConfigProvider", spec.Key, spec.Class)
		}
		var err error
		switch kind {
		case "env":
			ps.byName[spec.Name], err = newEnvProvider(spec.Params)
		case "file":
			ps.byName[spec.Name], err = newFileProvider(spec.Params)
		case "directory":
			ps.byName[spec.Name], err = newDirProvider(spec.Params)
		}
		if err != nil {
			return nil, fmt.Errorf("%sparam: %w", spec.Key, err)
		}
	}
	return ps, nil
}

// Names lists the configured providers, sorted.
func (p *Providers) Names() []string {
	names := make([]string, 0, len(p.byName))
	for n := range p.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Resolve returns cfg with every placeholder of a configured provider replaced by its value. cfg
// itself is not changed; a config without placeholders is returned as it is. Errors name the key
// and the placeholder, never a resolved value.
func (p *Providers) Resolve(cfg map[string]string) (map[string]string, error) {
	if !HasPlaceholders(cfg) {
		return cfg, nil
	}
	// Gather the keys wanted per provider and path, then ask each once.
	type loc struct{ provider, path string }
	wanted := map[loc]map[string]bool{}
	for _, v := range cfg {
		for _, r := range Refs(v) {
			if p == nil || p.byName[r.Provider] == nil {
				continue
			}
			l := loc{r.Provider, r.Path}
			if wanted[l] == nil {
				wanted[l] = map[string]bool{}
			}
			wanted[l][r.Key] = true
		}
	}
	values := map[loc]map[string]string{}
	for l, keys := range wanted {
		ks := make([]string, 0, len(keys))
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		got, err := p.byName[l.provider].Get(l.path, ks)
		if err != nil {
			return nil, fmt.Errorf("config provider %s: %w", l.provider, err)
		}
		values[l] = got
	}
	out := make(map[string]string, len(cfg))
	keys := make([]string, 0, len(cfg))
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := cfg[k]
		var failed error
		out[k] = placeholder.ReplaceAllStringFunc(v, func(text string) string {
			m := placeholder.FindStringSubmatch(text)
			l := loc{m[1], m[3]}
			got, known := values[l]
			if !known {
				return text // not a provider of this worker: left as is, as in Kafka
			}
			val, ok := got[m[4]]
			if !ok && failed == nil {
				failed = fmt.Errorf("config %q: %s: no value for key %q", k, text, m[4])
			}
			return val
		})
		if failed != nil {
			return nil, failed
		}
	}
	return out, nil
}

// Unresolve puts placeholders back into task configs generated from a resolved connector config
// (Kafka's reverse transform): a task config key whose connector config value holds a placeholder
// gets that raw value back, so the config topic never holds a resolved secret.
func Unresolve(raw map[string]string, taskConfigs []map[string]string) []map[string]string {
	var withRefs []string
	for k, v := range raw {
		if HasPlaceholder(v) {
			withRefs = append(withRefs, k)
		}
	}
	if len(withRefs) == 0 {
		return taskConfigs
	}
	out := make([]map[string]string, len(taskConfigs))
	for i, tc := range taskConfigs {
		c := make(map[string]string, len(tc))
		for k, v := range tc {
			c[k] = v
		}
		for _, k := range withRefs {
			if _, ok := c[k]; ok {
				c[k] = raw[k]
			}
		}
		out[i] = c
	}
	return out
}

// envProvider is EnvVarConfigProvider: ${env:NAME}. The path must be empty.
type envProvider struct {
	allow *regexp.Regexp // nil: every variable
}

func newEnvProvider(params map[string]string) (*envProvider, error) {
	p := &envProvider{}
	if pat := params["allowlist.pattern"]; pat != "" {
		re, err := regexp.Compile("^(?:" + pat + ")$")
		if err != nil {
			return nil, fmt.Errorf("allowlist.pattern: %v", err)
		}
		p.allow = re
	}
	return p, nil
}

func (p *envProvider) Get(path string, keys []string) (map[string]string, error) {
	if path != "" {
		return nil, fmt.Errorf("${env:%s:...}: the env provider takes no path", path)
	}
	out := map[string]string{}
	for _, k := range keys {
		if p.allow != nil && !p.allow.MatchString(k) {
			return nil, fmt.Errorf("environment variable %s does not match allowlist.pattern", k)
		}
		v, ok := os.LookupEnv(k)
		if !ok {
			return nil, fmt.Errorf("environment variable %s is not set on this worker", k)
		}
		out[k] = v
	}
	return out, nil
}

// allowedPaths is KIP-993's allowed.paths: absolute directories a provider may read under.
type allowedPaths []string

func newAllowedPaths(params map[string]string) (allowedPaths, error) {
	var out allowedPaths
	for _, p := range config.SplitList(params["allowed.paths"]) {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("allowed.paths: %s is not an absolute path", p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// check returns the cleaned path, or an error if it is outside every allowed path (symbolic links
// followed, so a link cannot lead out).
func (a allowedPaths) check(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%s: expected an absolute path", path)
	}
	clean := filepath.Clean(path)
	if len(a) == 0 {
		return clean, nil
	}
	real := clean
	if r, err := filepath.EvalSymlinks(clean); err == nil {
		real = r
	}
	var cleanOK, realOK bool
	for _, dir := range a {
		rd := dir
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			rd = r
		}
		cleanOK = cleanOK || under(clean, dir) || under(clean, rd)
		realOK = realOK || under(real, dir) || under(real, rd)
	}
	if cleanOK && realOK {
		return clean, nil
	}
	return "", fmt.Errorf("%s is not under allowed.paths (%s)", path, strings.Join(a, ","))
}

func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// fileProvider is FileConfigProvider: ${file:/path/x.properties:key}.
type fileProvider struct{ allowed allowedPaths }

func newFileProvider(params map[string]string) (*fileProvider, error) {
	a, err := newAllowedPaths(params)
	return &fileProvider{a}, err
}

func (p *fileProvider) Get(path string, keys []string) (map[string]string, error) {
	if path == "" {
		return nil, errors.New("the file provider needs a path: ${file:/path/to/file.properties:key}")
	}
	clean, err := p.allowed.check(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(clean)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", clean, unwrapPathError(err))
	}
	props, err := config.ParseProperties(b)
	if err != nil {
		// Only the line: the text could hold a secret.
		msg := err.Error()
		if i := strings.Index(msg, ":"); i > 0 {
			msg = msg[:i]
		}
		return nil, fmt.Errorf("%s is not a valid properties file (%s)", clean, msg)
	}
	out := map[string]string{}
	for _, k := range keys {
		v, ok := props[k]
		if !ok {
			return nil, fmt.Errorf("%s has no key %q", clean, k)
		}
		out[k] = v
	}
	return out, nil
}

// dirProvider is DirectoryConfigProvider: ${directory:/run/secrets:name} is the content of the
// regular file /run/secrets/name.
type dirProvider struct{ allowed allowedPaths }

func newDirProvider(params map[string]string) (*dirProvider, error) {
	a, err := newAllowedPaths(params)
	return &dirProvider{a}, err
}

func (p *dirProvider) Get(path string, keys []string) (map[string]string, error) {
	if path == "" {
		return nil, errors.New("the directory provider needs a path: ${directory:/path/to/dir:file}")
	}
	dir, err := p.allowed.check(path)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range keys {
		if k == "" || k == "." || k == ".." || strings.ContainsAny(k, `/\`) {
			return nil, fmt.Errorf("%q: expected a file name in %s", k, dir)
		}
		f := filepath.Join(dir, k)
		st, err := os.Stat(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, unwrapPathError(err))
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", f)
		}
		if _, err := p.allowed.check(f); err != nil {
			return nil, err
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, unwrapPathError(err))
		}
		out[k] = string(b)
	}
	return out, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
