package hcl

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
	"github.com/zclconf/go-cty/cty/function/stdlib"
)

// Marks carried by values, so that the connector config knows where a value came from: a secret()
// placeholder (shown as such, and only as such), or a clear value read by env() or file().
type (
	secretMark struct{}
	envMark    struct{ name string }
	fileMark   struct{ path string }
)

// maxFileBytes bounds what file() reads: connector settings, not data.
const maxFileBytes = 1 << 20

// providerName is a config provider's name as config.providers lists it.
var providerName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// functions are the functions connector files may call.
func functions(opts Options) map[string]function.Function {
	fns := map[string]function.Function{
		"env":     envFunc(opts),
		"file":    fileFunc(opts),
		"abspath": abspathFunc(opts),
		"secret":  secretFunc,

		"upper":      stdlib.UpperFunc,
		"lower":      stdlib.LowerFunc,
		"trimspace":  stdlib.TrimSpaceFunc,
		"trimprefix": stdlib.TrimPrefixFunc,
		"trimsuffix": stdlib.TrimSuffixFunc,
		"replace":    stdlib.ReplaceFunc,
		"split":      stdlib.SplitFunc,
		"join":       stdlib.JoinFunc,
		"format":     stdlib.FormatFunc,
		"concat":     stdlib.ConcatFunc,
		"merge":      stdlib.MergeFunc,
		"coalesce":   stdlib.CoalesceFunc,
		"lookup":     stdlib.LookupFunc,
		"length":     stdlib.LengthFunc,
		"jsonencode": stdlib.JSONEncodeFunc,
		"tostring":   stdlib.MakeToFunc(cty.String),
		"tonumber":   stdlib.MakeToFunc(cty.Number),
		"tobool":     stdlib.MakeToFunc(cty.Bool),
	}
	return fns
}

// env("NAME") is the environment variable NAME, and env("NAME", "default") the default when NAME
// is not set. Where the files are read counts: the worker's environment when the worker reconciles,
// the shell's for wasmconnect plan/apply. The value is written to the config topic in clear; for a
// secret use secret("env", "NAME"), which the worker resolves when a task starts.
func envFunc(opts Options) function.Function {
	return function.New(&function.Spec{
		Description: "The value of an environment variable, with an optional default.",
		Params:      []function.Parameter{{Name: "name", Type: cty.String}},
		VarParam:    &function.Parameter{Name: "default", Type: cty.String},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			name := args[0].AsString()
			if len(args) > 2 {
				return cty.NilVal, function.NewArgErrorf(2, "env takes a name and at most one default, got %d arguments", len(args))
			}
			v, ok := opts.lookupEnv(name)
			if !ok {
				if len(args) == 2 {
					v = args[1].AsString()
				} else {
					return cty.NilVal, fmt.Errorf("the environment variable %s is not set; set it, or give a default: env(%q, \"...\")", name, name)
				}
			}
			return cty.StringVal(v).Mark(envMark{name}), nil
		},
	})
}

// file("path") is the content of a file, a path relative to the working directory.
func fileFunc(opts Options) function.Function {
	return function.New(&function.Spec{
		Description: "The content of a file.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			path := opts.abs(args[0].AsString())
			st, err := os.Stat(path)
			if err != nil {
				return cty.NilVal, fmt.Errorf("reading %s: %w", path, unwrapPathError(err))
			}
			if st.IsDir() {
				return cty.NilVal, fmt.Errorf("%s is a directory, expected a file", path)
			}
			if st.Size() > maxFileBytes {
				return cty.NilVal, fmt.Errorf("%s has %d bytes, more than file() reads (%d)", path, st.Size(), maxFileBytes)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return cty.NilVal, fmt.Errorf("reading %s: %w", path, unwrapPathError(err))
			}
			return cty.StringVal(string(b)).Mark(fileMark{args[0].AsString()}), nil
		},
	})
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// abspath("rel") is a path made absolute against the working directory: plugins see files by their
// absolute path (plugin.fs.allow).
func abspathFunc(opts Options) function.Function {
	return function.New(&function.Spec{
		Description: "A path made absolute against the working directory.",
		Params:      []function.Parameter{{Name: "path", Type: cty.String}},
		Type:        function.StaticReturnType(cty.String),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			return cty.StringVal(opts.abs(args[0].AsString())), nil
		},
	})
}

// secret("env", "NAME"), secret("file", "/path/x.properties", "key") and
// secret("directory", "/run/secrets", "name") render a Kafka config-provider placeholder
// (${env:NAME}, ${file:/path/x.properties:key}, ...). The placeholder, never the value, is what the
// config topic and the REST API hold; the worker resolves it with its config.providers when a task
// starts. The first argument is the provider's name in the worker's config.providers.
var secretFunc = function.New(&function.Spec{
	Description: "A config-provider placeholder: ${provider:[path:]key}, resolved by the worker at task start.",
	Params:      []function.Parameter{{Name: "provider", Type: cty.String}, {Name: "path_or_key", Type: cty.String}},
	VarParam:    &function.Parameter{Name: "key", Type: cty.String},
	Type:        function.StaticReturnType(cty.String),
	Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
		if len(args) > 3 {
			return cty.NilVal, fmt.Errorf("secret takes a provider, an optional path and a key, got %d arguments", len(args))
		}
		provider := args[0].AsString()
		if !providerName.MatchString(provider) {
			return cty.NilVal, function.NewArgErrorf(0, "provider %q: expected the name of one of the worker's config.providers, like \"env\", \"file\" or \"directory\"", provider)
		}
		var parts []string
		for i, a := range args[1:] {
			s := a.AsString()
			switch {
			case s == "":
				return cty.NilVal, function.NewArgErrorf(i+1, "must not be empty")
			case strings.ContainsAny(s, "{}"):
				return cty.NilVal, function.NewArgErrorf(i+1, "%q: braces cannot appear in a placeholder", s)
			}
			parts = append(parts, s)
		}
		// ${provider:path:key}: the path ends at the first colon after the provider, so only the
		// key may contain one, and only when a path is given.
		if strings.Contains(parts[0], ":") {
			if len(parts) == 1 {
				return cty.NilVal, function.NewArgErrorf(1, "key %q: a colon would be read as the end of a path; give the path as its own argument", parts[0])
			}
			return cty.NilVal, function.NewArgErrorf(1, "path %q: a path in a placeholder cannot contain a colon", parts[0])
		}
		return cty.StringVal("${" + provider + ":" + strings.Join(parts, ":") + "}").Mark(secretMark{}), nil
	},
})

func (o Options) lookupEnv(name string) (string, bool) {
	if o.LookupEnv != nil {
		return o.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

func (o Options) workDir() string {
	if o.WorkDir != "" {
		return o.WorkDir
	}
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}

func (o Options) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(o.workDir(), p)
}
