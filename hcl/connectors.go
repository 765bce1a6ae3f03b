package hcl

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
)

// State is a connector's desired state.
type State string

const (
	StateRunning State = "running"
	StatePaused  State = "paused"
	StateStopped State = "stopped"
)

// Connector is one connector block, evaluated into the config Kafka Connect takes.
type Connector struct {
	Name string
	// Config is the connector config as PUT /connectors/{name}/config takes it, without "name":
	// connector.class, tasks.max, transforms.*, predicates.*, *.converter*, errors.* and the
	// config map.
	Config map[string]string
	State  State
	// Secret lists the keys whose value holds a secret() placeholder.
	Secret map[string]bool
	// KeyPositions says where each key is set ("file:line,col").
	KeyPositions map[string]string
	// Where the block is declared.
	File         string
	Line, Column int
}

// Position is "file:line,col" of the connector block.
func (c Connector) Position() string { return fmt.Sprintf("%s:%d,%d", c.File, c.Line, c.Column) }

// Connectors is the desired state a directory of HCL files declares.
type Connectors struct {
	Files      []string    // the files read, in order
	Connectors []Connector // sorted by name
}

// Problem is one error in an HCL file, with its position.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line == 0 {
		if p.File == "" {
			return p.Message
		}
		return p.File + ": " + p.Message
	}
	return fmt.Sprintf("%s:%d,%d: %s", p.File, p.Line, p.Column, p.Message)
}

// Error is what loading connector files failed with: every problem found, with its position.
type Error struct{ Problems []Problem }

func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Options are the inputs of connector files besides the files themselves.
type Options struct {
	// Vars sets variables (--var name=value). They win over WASMCONNECT_VAR_<name> in the
	// environment, which wins over the variable's default. Values of variables whose type is not
	// string are read as HCL expressions (["a", "b"], 3, true).
	Vars map[string]string
	// LookupEnv reads the environment for env() and WASMCONNECT_VAR_*; nil: os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// WorkDir is what relative paths in file() and abspath() are relative to; "": the process's
	// working directory.
	WorkDir string
}

// File is one HCL file's name and content.
type File struct {
	Name string
	Src  []byte
}

// VarEnvPrefix prefixes the environment variables that set HCL variables.
const VarEnvPrefix = "WASMCONNECT_VAR_"

// ConnectorFiles lists the connector files of dir: its *.hcl files, sorted, without hidden ones
// (editors' lock and backup files).
func ConnectorFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || strings.HasPrefix(n, ".") || !strings.HasSuffix(n, ".hcl") {
			continue
		}
		files = append(files, filepath.Join(dir, n))
	}
	sort.Strings(files)
	return files, nil
}

// LoadConnectorsDir reads every *.hcl file of dir and returns the connectors they declare. Any
// error in any file fails the whole load, as an *Error listing every problem found with its
// position: half a directory is never a desired state.
func LoadConnectorsDir(dir string, opts Options) (*Connectors, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &Error{Problems: []Problem{{File: dir, Message: "connectors directory: " + unwrapPathError(err).Error()}}}
	}
	if !st.IsDir() {
		return nil, &Error{Problems: []Problem{{File: dir, Message: "connectors directory: not a directory"}}}
	}
	names, err := ConnectorFiles(dir)
	if err != nil {
		return nil, &Error{Problems: []Problem{{File: dir, Message: "connectors directory: " + err.Error()}}}
	}
	var files []File
	var problems []Problem
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			problems = append(problems, Problem{File: n, Message: unwrapPathError(err).Error()})
			continue
		}
		files = append(files, File{Name: n, Src: b})
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	return ParseConnectors(files, opts)
}

var fileSchema = &hcl.BodySchema{Blocks: []hcl.BlockHeaderSchema{
	{Type: "connector", LabelNames: []string{"name"}},
	{Type: "variable", LabelNames: []string{"name"}},
	{Type: "locals"},
}}

var variableSchema = &hcl.BodySchema{Attributes: []hcl.AttributeSchema{
	{Name: "default"}, {Name: "type"}, {Name: "description"},
}}

var connectorSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "class", Required: true},
		{Name: "tasks_max"},
		{Name: "state"},
		{Name: "config"},
	},
	Blocks: []hcl.BlockHeaderSchema{
		{Type: "transform", LabelNames: []string{"alias"}},
		{Type: "predicate", LabelNames: []string{"alias"}},
		{Type: "key_converter"},
		{Type: "value_converter"},
		{Type: "header_converter"},
		{Type: "errors"},
	},
}

// errorsKeys maps the attributes of an errors block to Kafka Connect's error handling keys (KIP-298).
var errorsKeys = map[string]string{
	"tolerance":                            "errors.tolerance",
	"retry_timeout_ms":                     "errors.retry.timeout",
	"retry_delay_max_ms":                   "errors.retry.delay.max.ms",
	"log_enable":                           "errors.log.enable",
	"log_include_messages":                 "errors.log.include.messages",
	"dead_letter_queue_topic":              "errors.deadletterqueue.topic.name",
	"dead_letter_queue_replication_factor": "errors.deadletterqueue.topic.replication.factor",
	"dead_letter_queue_context_headers":    "errors.deadletterqueue.context.headers.enable",
}

var errorsSchema = func() *hcl.BodySchema {
	s := &hcl.BodySchema{}
	for _, n := range slices.Sorted(maps.Keys(errorsKeys)) {
		s.Attributes = append(s.Attributes, hcl.AttributeSchema{Name: n})
	}
	return s
}()

// ParseConnectors parses connector files, which together make one desired state: variables and
// locals are shared, connector names are unique across files.
func ParseConnectors(files []File, opts Options) (*Connectors, error) {
	l := &loader{opts: opts}
	type parsed struct {
		name    string
		content *hcl.BodyContent
	}
	var bodies []parsed
	for _, f := range files {
		hf, d := hclsyntax.ParseConfig(f.Src, f.Name, hcl.InitialPos)
		l.diags = append(l.diags, d...)
		if d.HasErrors() {
			continue
		}
		content, d := hf.Body.Content(fileSchema)
		l.diags = append(l.diags, expected(d, fileSchema)...)
		bodies = append(bodies, parsed{f.Name, content})
	}
	if l.diags.HasErrors() {
		return nil, l.err()
	}

	// Variables, then locals, then connectors, each across all files.
	var varBlocks, localBlocks, connBlocks []*hcl.Block
	for _, b := range bodies {
		for _, blk := range b.content.Blocks {
			switch blk.Type {
			case "variable":
				varBlocks = append(varBlocks, blk)
			case "locals":
				localBlocks = append(localBlocks, blk)
			case "connector":
				connBlocks = append(connBlocks, blk)
			}
		}
	}
	l.evalVariables(varBlocks)
	if l.diags.HasErrors() {
		return nil, l.err()
	}
	l.evalLocals(localBlocks)
	if l.diags.HasErrors() {
		return nil, l.err()
	}

	out := &Connectors{}
	for _, f := range files {
		out.Files = append(out.Files, f.Name)
	}
	seen := map[string]*hcl.Block{}
	for _, blk := range connBlocks {
		name := blk.Labels[0]
		if prev, dup := seen[name]; dup {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Duplicate connector %q", name),
				Detail: fmt.Sprintf("connector %q is already declared at %s; connector names must be unique across the directory",
					name, rangePos(prev.LabelRanges[0])),
				Subject: blk.LabelRanges[0].Ptr(),
			})
			continue
		}
		seen[name] = blk
		if c, ok := l.connector(blk); ok {
			out.Connectors = append(out.Connectors, c)
		}
	}
	if l.diags.HasErrors() {
		return nil, l.err()
	}
	sort.Slice(out.Connectors, func(i, j int) bool { return out.Connectors[i].Name < out.Connectors[j].Name })
	return out, nil
}

func rangePos(r hcl.Range) string {
	return fmt.Sprintf("%s:%d,%d", r.Filename, r.Start.Line, r.Start.Column)
}

// loader evaluates connector files.
type loader struct {
	opts   Options
	diags  hcl.Diagnostics
	vars   map[string]cty.Value
	locals map[string]cty.Value // evaluated locals
}

func (l *loader) add(d *hcl.Diagnostic) { l.diags = append(l.diags, d) }

func (l *loader) errorf(r hcl.Range, summary, format string, args ...any) {
	l.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: r.Ptr()})
}

func (l *loader) err() error {
	var e Error
	for _, d := range l.diags {
		if d.Severity != hcl.DiagError {
			continue
		}
		p := Problem{Message: d.Summary}
		if d.Detail != "" {
			p.Message += "; " + d.Detail
		}
		if d.Subject != nil {
			p.File, p.Line, p.Column = d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column
		}
		e.Problems = append(e.Problems, p)
	}
	return &e
}

// evalContext is what expressions see: var.*, local.*, path.cwd and path.module, and the functions.
func (l *loader) evalContext(file string) *hcl.EvalContext {
	vars := map[string]cty.Value{
		"var":   objectOf(l.vars),
		"local": objectOf(l.locals),
		"path": cty.ObjectVal(map[string]cty.Value{
			"cwd":    cty.StringVal(l.opts.workDir()),
			"module": cty.StringVal(l.opts.abs(filepath.Dir(file))),
		}),
	}
	return &hcl.EvalContext{Variables: vars, Functions: functions(l.opts)}
}

func objectOf(m map[string]cty.Value) cty.Value {
	if len(m) == 0 {
		return cty.EmptyObjectVal
	}
	return cty.ObjectVal(m)
}

// variables evaluates the variable blocks: --var, then WASMCONNECT_VAR_<name>, then the default.
func (l *loader) evalVariables(blocks []*hcl.Block) {
	l.vars = map[string]cty.Value{}
	declared := map[string]*hcl.Block{}
	for _, blk := range blocks {
		name := blk.Labels[0]
		if !hclsyntax.ValidIdentifier(name) {
			l.errorf(blk.LabelRanges[0], "Invalid variable name", "%q: expected a name made of letters, digits, underscores and dashes, starting with a letter", name)
			continue
		}
		if prev, dup := declared[name]; dup {
			l.errorf(blk.LabelRanges[0], fmt.Sprintf("Duplicate variable %q", name), "variable %q is already declared at %s", name, rangePos(prev.LabelRanges[0]))
			continue
		}
		declared[name] = blk
		content, d := blk.Body.Content(variableSchema)
		l.diags = append(l.diags, expected(d, variableSchema)...)
		if d.HasErrors() {
			continue
		}
		ty := cty.DynamicPseudoType
		if a, ok := content.Attributes["type"]; ok {
			t, d := typeexpr.TypeConstraint(a.Expr)
			l.diags = append(l.diags, d...)
			if d.HasErrors() {
				continue
			}
			ty = t
		}
		var (
			v      cty.Value
			source string
			rng    = blk.DefRange
			given  bool
		)
		if s, ok := l.opts.Vars[name]; ok {
			v, given, source = l.rawVar(s, ty, "--var "+name), true, "--var "+name
		} else if s, ok := l.opts.lookupEnv(VarEnvPrefix + name); ok {
			v, given, source = l.rawVar(s, ty, VarEnvPrefix+name), true, VarEnvPrefix+name
		} else if a, ok := content.Attributes["default"]; ok {
			// A default may call functions but not refer to other variables.
			var d hcl.Diagnostics
			v, d = a.Expr.Value(&hcl.EvalContext{Functions: functions(l.opts)})
			l.diags = append(l.diags, d...)
			if d.HasErrors() {
				continue
			}
			given, source, rng = true, "the default", a.Expr.Range()
		}
		if !given {
			l.errorf(blk.DefRange, "Variable without a value",
				"variable %q has no default; expected a default = ..., --var %s=VALUE or %s%s in the environment", name, name, VarEnvPrefix, name)
			continue
		}
		if v == cty.NilVal {
			continue // rawVar reported it
		}
		cv, err := convert.Convert(v, ty)
		if err != nil {
			l.errorf(rng, "Invalid value for variable", "variable %q from %s: expected %s: %v", name, source, ty.FriendlyName(), err)
			continue
		}
		l.vars[name] = cv
	}
	for name := range l.opts.Vars {
		if _, ok := declared[name]; !ok {
			l.add(&hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Undeclared variable",
				Detail: fmt.Sprintf("--var %s: no variable %q is declared; expected a variable %q { ... } block", name, name, name)})
		}
	}
}

// rawVar reads a variable's value given as text: a string as it is, any other type as an HCL
// expression.
func (l *loader) rawVar(s string, ty cty.Type, source string) cty.Value {
	if ty == cty.String || ty == cty.DynamicPseudoType {
		return cty.StringVal(s)
	}
	expr, d := hclsyntax.ParseExpression([]byte(s), source, hcl.InitialPos)
	l.diags = append(l.diags, d...)
	if d.HasErrors() {
		return cty.NilVal
	}
	v, d := expr.Value(nil)
	l.diags = append(l.diags, d...)
	if d.HasErrors() {
		return cty.NilVal
	}
	return v
}

// locals evaluates locals blocks; a local may refer to variables and to other locals.
func (l *loader) evalLocals(blocks []*hcl.Block) {
	l.locals = map[string]cty.Value{}
	pending := map[string]*hcl.Attribute{}
	for _, blk := range blocks {
		attrs, d := blk.Body.JustAttributes()
		l.diags = append(l.diags, d...)
		for name, a := range attrs {
			if prev, dup := pending[name]; dup {
				l.errorf(a.NameRange, fmt.Sprintf("Duplicate local %q", name), "local.%s is already defined at %s", name, rangePos(prev.NameRange))
				continue
			}
			pending[name] = a
		}
	}
	// Evaluate those whose references are all known, until none is left or no progress is made.
	for len(pending) > 0 {
		progress := false
		for _, name := range slices.Sorted(maps.Keys(pending)) {
			a := pending[name]
			ready := true
			for _, t := range a.Expr.Variables() {
				if t.RootName() != "local" || len(t) < 2 {
					continue
				}
				if ref, ok := t[1].(hcl.TraverseAttr); ok {
					if _, waiting := pending[ref.Name]; waiting {
						ready = false
					}
				}
			}
			if !ready {
				continue
			}
			v, ok := l.value(a.Expr, l.evalContext(a.Range.Filename))
			if !ok {
				v = cty.DynamicVal
			}
			l.locals[name] = v
			delete(pending, name)
			progress = true
		}
		if !progress {
			for _, name := range slices.Sorted(maps.Keys(pending)) {
				a := pending[name]
				l.errorf(a.Expr.Range(), "Local refers to itself", "local.%s depends on itself through other locals; expected locals without cycles", name)
			}
			return
		}
	}
}

// checkRefs reports references to undeclared variables and locals, and to anything else, saying
// what is declared.
func (l *loader) checkRefs(expr hcl.Expression) bool {
	good := true
	for _, t := range expr.Variables() {
		root := t.RootName()
		var name string
		if len(t) > 1 {
			if a, ok := t[1].(hcl.TraverseAttr); ok {
				name = a.Name
			}
		}
		rng := t.SourceRange()
		switch root {
		case "var":
			if _, ok := l.vars[name]; !ok {
				l.errorf(rng, "Undeclared variable", "var.%s is not declared; declared variables: %s (declare it with variable %q { default = ... })",
					name, listOrNone(slices.Sorted(maps.Keys(l.vars))), name)
				good = false
			}
		case "local":
			if _, ok := l.locals[name]; !ok && l.locals != nil {
				l.errorf(rng, "Undeclared local", "local.%s is not defined; defined locals: %s", name, listOrNone(slices.Sorted(maps.Keys(l.locals))))
				good = false
			}
		case "path":
			if name != "cwd" && name != "module" {
				l.errorf(rng, "Unknown path", "path.%s: expected path.cwd or path.module", name)
				good = false
			}
		default:
			l.errorf(rng, "Unknown reference", "%q: expected var.<name>, local.<name>, path.cwd or path.module (a string needs quotes)", root)
			good = false
		}
	}
	return good
}

// setting is one key of a connector config and where it came from.
type setting struct {
	value  string
	secret bool
	rng    hcl.Range
	by     string
}

// connectorBuilder collects one connector's keys, refusing a key set twice.
type connectorBuilder struct {
	l    *loader
	name string
	keys map[string]setting
}

func (b *connectorBuilder) set(key, value string, marks cty.ValueMarks, rng hcl.Range, by string) {
	if prev, dup := b.keys[key]; dup {
		b.l.errorf(rng, "Key set twice", "connector %q: %q is set by %s here and by %s at %s; expected it in one place",
			b.name, key, by, prev.by, rangePos(prev.rng))
		return
	}
	_, secret := marks[secretMark{}]
	if !secret && sensitiveKey.MatchString(key) {
		for m := range marks {
			var from string
			switch m := m.(type) {
			case envMark:
				from = fmt.Sprintf("env(%q)", m.name)
				b.l.errorf(rng, "Secret in clear", "connector %q: %q takes its value from %s in clear, which would be stored in the config topic; expected secret(\"env\", %q), which the worker resolves when the task starts",
					b.name, key, from, m.name)
			case fileMark:
				from = fmt.Sprintf("file(%q)", m.path)
				b.l.errorf(rng, "Secret in clear", "connector %q: %q takes its value from %s in clear, which would be stored in the config topic; expected secret(\"directory\", DIR, NAME) or secret(\"file\", PROPERTIES, KEY), which the worker resolves when the task starts",
					b.name, key, from)
			}
		}
	}
	b.keys[key] = setting{value: value, secret: secret, rng: rng, by: by}
}

// sensitiveKey matches config keys that usually hold credentials.
var sensitiveKey = regexp.MustCompile(`(?i)(password|passwd|secret|token|credential|api[._-]?key|private[._-]?key|access[._-]?key|jaas\.config|user\.info)`)

func (l *loader) connector(blk *hcl.Block) (Connector, bool) {
	name := blk.Labels[0]
	nameRange := blk.LabelRanges[0]
	before := len(l.diags)
	if strings.TrimSpace(name) == "" || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		l.errorf(nameRange, "Invalid connector name", "%q: expected a non-empty name without control characters", name)
		return Connector{}, false
	}
	content, d := blk.Body.Content(connectorSchema)
	l.diags = append(l.diags, expected(d, connectorSchema)...)
	if d.HasErrors() {
		return Connector{}, false
	}
	ctx := l.evalContext(blk.DefRange.Filename)
	b := &connectorBuilder{l: l, name: name, keys: map[string]setting{}}
	c := Connector{Name: name, State: StateRunning, File: nameRange.Filename, Line: blk.DefRange.Start.Line, Column: blk.DefRange.Start.Column}

	if a, ok := content.Attributes["class"]; ok {
		if s, marks, ok := l.stringAttr(a, ctx, "the connector's class or alias, like \"FileStreamSource\""); ok {
			b.set("connector.class", s, marks, a.Expr.Range(), "class")
		}
	}
	if a, ok := content.Attributes["tasks_max"]; ok {
		if v, ok := l.value(a.Expr, ctx); ok {
			v, marks := v.UnmarkDeep()
			n, err := convert.Convert(v, cty.Number)
			if err != nil || n.IsNull() || !n.AsBigFloat().IsInt() || n.AsBigFloat().Sign() <= 0 {
				l.errorf(a.Expr.Range(), "Invalid tasks_max", "connector %q: expected a whole number of at least 1", name)
			} else {
				s, _ := settingValue(n)
				b.set("tasks.max", s, marks, a.Expr.Range(), "tasks_max")
			}
		}
	}
	if a, ok := content.Attributes["state"]; ok {
		if s, _, ok := l.stringAttr(a, ctx, `"running", "paused" or "stopped"`); ok {
			switch st := State(strings.ToLower(s)); st {
			case StateRunning, StatePaused, StateStopped:
				c.State = st
			default:
				l.errorf(a.Expr.Range(), "Invalid state", "connector %q: state %q: expected \"running\", \"paused\" or \"stopped\"", name, s)
			}
		}
	}
	if a, ok := content.Attributes["config"]; ok {
		l.mapSettings(b, a, ctx, "", "config")
	}

	// Predicates first: transforms refer to them.
	predicates := map[string]hcl.Range{}
	var predAliases, transAliases []string
	transSeen := map[string]hcl.Range{}
	for _, nb := range content.Blocks {
		if nb.Type != "predicate" {
			continue
		}
		alias := nb.Labels[0]
		if !l.alias(nb, "predicate", predicates) {
			continue
		}
		predAliases = append(predAliases, alias)
		l.pluginBlock(b, nb, ctx, "predicates."+alias+".", fmt.Sprintf("predicate %q", alias), nil)
	}
	for _, nb := range content.Blocks {
		switch nb.Type {
		case "transform":
			alias := nb.Labels[0]
			if !l.alias(nb, "transform", transSeen) {
				continue
			}
			transAliases = append(transAliases, alias)
			l.pluginBlock(b, nb, ctx, "transforms."+alias+".", fmt.Sprintf("transform %q", alias), func(a *hcl.Attribute) bool {
				switch a.Name {
				case "predicate":
					s, marks, ok := l.stringAttr(a, ctx, "the alias of a predicate block of this connector")
					if !ok {
						return true
					}
					if _, declared := predicates[s]; !declared {
						l.errorf(a.Expr.Range(), "Unknown predicate", "connector %q: transform %q refers to predicate %q, which this connector does not declare; expected one of: %s",
							name, alias, s, listOrNone(predAliases))
						return true
					}
					b.set("transforms."+alias+".predicate", s, marks, a.Expr.Range(), fmt.Sprintf("transform %q", alias))
					return true
				case "negate":
					v, ok := l.value(a.Expr, ctx)
					if !ok {
						return true
					}
					v, marks := v.UnmarkDeep()
					bv, err := convert.Convert(v, cty.Bool)
					if err != nil || bv.IsNull() {
						l.errorf(a.Expr.Range(), "Invalid negate", "transform %q: expected true or false", alias)
						return true
					}
					s, _ := settingValue(bv)
					b.set("transforms."+alias+".negate", s, marks, a.Expr.Range(), fmt.Sprintf("transform %q", alias))
					return true
				}
				return false
			})
		case "key_converter", "value_converter", "header_converter":
			prefix := strings.TrimSuffix(nb.Type, "_converter") + ".converter"
			l.converterBlock(b, nb, ctx, prefix)
		case "errors":
			l.errorsBlock(b, nb, ctx)
		}
	}
	if len(transAliases) > 0 {
		b.set("transforms", strings.Join(transAliases, ","), nil, blk.DefRange, "the transform blocks")
	}
	if len(predAliases) > 0 {
		b.set("predicates", strings.Join(predAliases, ","), nil, blk.DefRange, "the predicate blocks")
	}
	if len(l.diags) > before && l.diags[before:].HasErrors() {
		return Connector{}, false
	}
	c.Config = make(map[string]string, len(b.keys))
	c.KeyPositions = make(map[string]string, len(b.keys))
	for k, s := range b.keys {
		c.Config[k] = s.value
		c.KeyPositions[k] = rangePos(s.rng)
		if s.secret {
			if c.Secret == nil {
				c.Secret = map[string]bool{}
			}
			c.Secret[k] = true
		}
	}
	return c, true
}

// alias checks a transform or predicate block's alias: non-empty, no comma or space, not repeated.
func (l *loader) alias(blk *hcl.Block, kind string, seen map[string]hcl.Range) bool {
	alias := blk.Labels[0]
	r := blk.LabelRanges[0]
	if alias == "" || strings.ContainsAny(alias, ", \t\n") {
		l.errorf(r, "Invalid "+kind+" alias", "%q: expected a name without commas or spaces", alias)
		return false
	}
	if prev, dup := seen[alias]; dup {
		l.errorf(r, "Duplicate "+kind+" alias", "%s %q is already declared at %s", kind, alias, rangePos(prev))
		return false
	}
	seen[alias] = r
	return true
}

// pluginBlock reads a transform or predicate block: type (the class), config (a map of keys taken
// as they are), and any other attribute as a setting whose name has underscores read as dots.
// special handles attributes of its own and says so.
func (l *loader) pluginBlock(b *connectorBuilder, blk *hcl.Block, ctx *hcl.EvalContext, prefix, what string, special func(*hcl.Attribute) bool) {
	attrs, d := blk.Body.JustAttributes()
	l.diags = append(l.diags, d...)
	if _, ok := attrs["type"]; !ok {
		l.errorf(blk.DefRange, "Missing type", "%s: expected type = \"...\", the class or alias of the plugin, like \"InsertField$Value\"", what)
	}
	for _, a := range sortedAttrs(attrs) {
		switch {
		case a.Name == "type":
			if s, marks, ok := l.stringAttr(a, ctx, "the class or alias of the plugin"); ok {
				b.set(prefix+"type", s, marks, a.Expr.Range(), what)
			}
		case a.Name == "config":
			l.mapSettings(b, a, ctx, prefix, what)
		case special != nil && special(a):
		default:
			l.scalarSetting(b, a, ctx, prefix+strings.ReplaceAll(a.Name, "_", "."), what)
		}
	}
}

// converterBlock reads key_converter, value_converter and header_converter: class, and settings.
func (l *loader) converterBlock(b *connectorBuilder, blk *hcl.Block, ctx *hcl.EvalContext, prefix string) {
	what := blk.Type
	attrs, d := blk.Body.JustAttributes()
	l.diags = append(l.diags, d...)
	if _, ok := attrs["class"]; !ok {
		l.errorf(blk.DefRange, "Missing class", "%s: expected class = \"...\", like \"org.apache.kafka.connect.json.JsonConverter\"", what)
	}
	for _, a := range sortedAttrs(attrs) {
		switch a.Name {
		case "class":
			if s, marks, ok := l.stringAttr(a, ctx, "the converter's class or alias"); ok {
				b.set(prefix, s, marks, a.Expr.Range(), what)
			}
		case "config":
			l.mapSettings(b, a, ctx, prefix+".", what)
		default:
			l.scalarSetting(b, a, ctx, prefix+"."+strings.ReplaceAll(a.Name, "_", "."), what)
		}
	}
}

func (l *loader) errorsBlock(b *connectorBuilder, blk *hcl.Block, ctx *hcl.EvalContext) {
	content, d := blk.Body.Content(errorsSchema)
	l.diags = append(l.diags, expected(d, errorsSchema)...)
	for _, a := range sortedAttrs(content.Attributes) {
		key := errorsKeys[a.Name]
		if a.Name == "tolerance" {
			s, marks, ok := l.stringAttr(a, ctx, `"none" or "all"`)
			if !ok {
				continue
			}
			if s != "none" && s != "all" {
				l.errorf(a.Expr.Range(), "Invalid tolerance", "errors.tolerance %q: expected \"none\" or \"all\"", s)
				continue
			}
			b.set(key, s, marks, a.Expr.Range(), "errors")
			continue
		}
		l.scalarSetting(b, a, ctx, key, "errors")
	}
}

// value evaluates an expression, recording its diagnostics.
func (l *loader) value(expr hcl.Expression, ctx *hcl.EvalContext) (cty.Value, bool) {
	if !l.checkRefs(expr) {
		return cty.NilVal, false
	}
	v, d := expr.Value(ctx)
	l.diags = append(l.diags, d...)
	if d.HasErrors() {
		return cty.NilVal, false
	}
	return v, true
}

func (l *loader) stringAttr(a *hcl.Attribute, ctx *hcl.EvalContext, want string) (string, cty.ValueMarks, bool) {
	v, ok := l.value(a.Expr, ctx)
	if !ok {
		return "", nil, false
	}
	v, marks := v.UnmarkDeep()
	if v.IsNull() || v.Type() != cty.String || strings.TrimSpace(v.AsString()) == "" {
		l.errorf(a.Expr.Range(), "Invalid "+a.Name, "%s: expected a string: %s", a.Name, want)
		return "", nil, false
	}
	return v.AsString(), marks, true
}

// scalarSetting sets key from an attribute holding a string, number, bool or list; null leaves it unset.
func (l *loader) scalarSetting(b *connectorBuilder, a *hcl.Attribute, ctx *hcl.EvalContext, key, what string) {
	v, ok := l.value(a.Expr, ctx)
	if !ok {
		return
	}
	v, marks := v.UnmarkDeep()
	if v.IsNull() {
		return
	}
	s, err := settingValue(v)
	if err != nil {
		l.errorf(a.Expr.Range(), "Invalid setting", "%s: %s: %v", what, a.Name, err)
		return
	}
	b.set(key, s, marks, a.Expr.Range(), what)
}

// mapSettings sets prefix+key for each entry of a map attribute (keys as written); null values are
// left unset.
func (l *loader) mapSettings(b *connectorBuilder, a *hcl.Attribute, ctx *hcl.EvalContext, prefix, what string) {
	v, ok := l.value(a.Expr, ctx)
	if !ok {
		return
	}
	v, top := v.Unmark()
	if v.IsNull() {
		return
	}
	if !v.Type().IsObjectType() && !v.Type().IsMapType() {
		l.errorf(a.Expr.Range(), "Invalid config", "%s: expected a map of setting names to values, like { topic = \"orders\", \"batch.size\" = 100 }, got %s",
			what, v.Type().FriendlyName())
		return
	}
	for it := v.ElementIterator(); it.Next(); {
		k, ev := it.Element()
		key := k.AsString()
		rng := itemRange(a.Expr, key, ctx)
		ev, marks := ev.UnmarkDeep()
		if ev.IsNull() {
			continue
		}
		s, err := settingValue(ev)
		if err != nil {
			l.errorf(rng, "Invalid setting", "%s: %q: %v", what, key, err)
			continue
		}
		full := prefix + key
		if prefix == "" && full == "name" {
			l.errorf(rng, "Name in config", "connector %q: the connector's name is its block label; expected no \"name\" key in config", b.name)
			continue
		}
		b.set(full, s, mergeMarks(top, marks), rng, what)
	}
}

func mergeMarks(a, b cty.ValueMarks) cty.ValueMarks {
	if len(a) == 0 {
		return b
	}
	out := cty.ValueMarks{}
	for m := range a {
		out[m] = struct{}{}
	}
	for m := range b {
		out[m] = struct{}{}
	}
	return out
}

// itemRange is the range of key's value in an object literal, else the whole expression's.
func itemRange(expr hcl.Expression, key string, ctx *hcl.EvalContext) hcl.Range {
	if obj, ok := expr.(*hclsyntax.ObjectConsExpr); ok {
		for _, item := range obj.Items {
			k, d := item.KeyExpr.Value(ctx)
			if d.HasErrors() || k.IsMarked() || k.IsNull() || !k.IsKnown() || k.Type() != cty.String {
				continue
			}
			if k.AsString() == key {
				return item.KeyExpr.Range()
			}
		}
	}
	return expr.Range()
}

// expected adds to hcl's "Unsupported argument" and "Unsupported block type" diagnostics what the
// schema expects there.
func expected(diags hcl.Diagnostics, schema *hcl.BodySchema) hcl.Diagnostics {
	for _, d := range diags {
		switch d.Summary {
		case "Unsupported argument", "Unexpected argument":
			var names []string
			for _, a := range schema.Attributes {
				names = append(names, a.Name)
			}
			d.Detail = strings.TrimSpace(d.Detail + " Expected one of: " + listOrNone(names) + ".")
		case "Unsupported block type":
			var names []string
			for _, b := range schema.Blocks {
				names = append(names, b.Type)
			}
			d.Detail = strings.TrimSpace(d.Detail + " Expected blocks: " + listOrNone(names) + ".")
		}
	}
	return diags
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// sortedAttrs orders attributes as they appear in the file.
func sortedAttrs(attrs hcl.Attributes) []*hcl.Attribute {
	out := make([]*hcl.Attribute, 0, len(attrs))
	for _, a := range attrs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Range.Start.Byte < out[j].Range.Start.Byte })
	return out
}
