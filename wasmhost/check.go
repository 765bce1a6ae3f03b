package wasmhost

// Check: a module run through ABI v1's contract (sdk/ABI.md) the way a worker would run it, in the
// host's sandbox (no file system, no network, the memory cap and call timeout of the Config), with
// every finding in words a plugin author can act on.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
)

// CheckStep is one step of Check: what was checked and what was seen, or what is wrong.
type CheckStep struct {
	Name    string `json:"name"`              // "load", "descriptor", "VALIDATE JsonConverter", ...
	Detail  string `json:"detail,omitempty"`  // what was seen, when the step passed
	Problem string `json:"problem,omitempty"` // what is wrong, in plain words; "" = passed
}

// Check loads the module file at path as a worker would (cfg's limits apply; its PluginPath,
// FSAllow and NetAllow are ignored: the module sees no file system and no network) and runs it
// through the contract of ABI v1: the descriptor, VALIDATE of every plugin, the error paths every
// module must answer with an error result (an unknown op, a malformed request, an unknown plugin
// or handle) and still work after, and for each plugin an OPEN and a batch round trip of its kind.
// A trap or timeout in any step is a problem, reported with the guest's stderr. The error is only
// for a host that cannot be set up.
func Check(ctx context.Context, path string, cfg Config) ([]CheckStep, error) {
	cfg.FSAllow = nil
	cfg.NetAllow = netgrant.Grant{}
	h, err := openOne(ctx, path, cfg)
	if err != nil {
		return nil, err
	}
	defer h.Close(ctx)
	c := &checker{h: h}
	if errs := h.LoadErrors(); len(errs) > 0 {
		c.fail("load", "a worker would skip this module: %s%s", errs[0].Err, loadHint(errs[0].Err))
		return c.steps, nil
	}
	ps := h.Plugins()
	if len(ps) == 0 {
		c.fail("load", "the module describes no plugin of a kind this host knows (source, sink, converter, transformation, predicate)")
		return c.steps, nil
	}
	if err := h.CompileAll(); err != nil {
		c.fail("compile", "%s", err)
		return c.steps, nil
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = fmt.Sprintf("%s %s %s", p.Kind, p.Name, p.Version)
	}
	c.pass("load", "%d plugin(s): %s", len(ps), strings.Join(names, ", "))
	c.descriptor(ps)
	c.section(ps)
	for _, p := range ps {
		c.validate(ctx, p)
	}
	c.errorPaths(ctx, ps[0])
	for _, p := range ps {
		c.roundTrip(ctx, p)
	}
	if c.sess != nil {
		c.sess.Close(ctx)
	}
	return c.steps, nil
}

type checker struct {
	h     *Host
	sess  *Session
	steps []CheckStep
}

func (c *checker) pass(name, format string, args ...any) {
	c.steps = append(c.steps, CheckStep{Name: name, Detail: fmt.Sprintf(format, args...)})
}

func (c *checker) fail(name, format string, args ...any) {
	c.steps = append(c.steps, CheckStep{Name: name, Problem: fmt.Sprintf(format, args...)})
}

// loadHint adds what usually causes a load error of its kind.
func loadHint(err error) string {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "missing export wc_"):
		return "\n  hint: build the module as a library (reactor) on a wasmconnect SDK: Go with -buildmode=c-shared, Rust as a cdylib, C with -mexec-model=reactor; a program with a main (a WASI command) is not a plugin"
	case strings.Contains(msg, "invalid version header"):
		return "\n  hint: this looks like a component-model binary; wasmconnect loads core WebAssembly modules (wasm32-wasi / wasip1)"
	case strings.Contains(msg, "which the host does not provide"):
		return "\n  hint: the module imports a function no wasmconnect host offers; see sdk/ABI.md §1 for the imports there are"
	case strings.Contains(msg, "_initialize"):
		return "\n  hint: the module's initialisation (Go init functions, Rust/C constructors) fails or never ends before any plugin call"
	}
	return ""
}

// descriptor checks what the host does not refuse but a worker's users would trip over.
func (c *checker) descriptor(ps []Plugin) {
	var problems []string
	for _, p := range ps {
		if p.Version == "" {
			problems = append(problems, fmt.Sprintf("plugin %s has no version (GET /connector-plugins shows it)", p.Class))
		}
		seen := map[string]bool{}
		for _, k := range p.Config {
			switch {
			case k.Name == "":
				problems = append(problems, fmt.Sprintf("plugin %s declares a config key without a name", p.Class))
			case seen[k.Name]:
				problems = append(problems, fmt.Sprintf("plugin %s declares config key %s twice", p.Class, k.Name))
			}
			seen[k.Name] = true
			if !slices.Contains([]configdef.Type{configdef.String, configdef.Int, configdef.Short, configdef.Long, configdef.Double,
				configdef.Boolean, configdef.List, configdef.Class, configdef.Password}, configdef.Type(k.Type)) {
				problems = append(problems, fmt.Sprintf("plugin %s config key %s has type %q; Kafka's types are STRING, INT, SHORT, LONG, DOUBLE, BOOLEAN, LIST, CLASS, PASSWORD", p.Class, k.Name, k.Type))
			} else if k.DefaultValue != nil {
				if _, err := configdef.Parse(k.Name, configdef.Type(k.Type), *k.DefaultValue); err != nil {
					problems = append(problems, fmt.Sprintf("plugin %s config key %s: its default does not parse as its type: %v", p.Class, k.Name, err))
				}
			}
			if !slices.Contains([]string{"HIGH", "MEDIUM", "LOW"}, k.Importance) {
				problems = append(problems, fmt.Sprintf("plugin %s config key %s has importance %q; want HIGH, MEDIUM or LOW", p.Class, k.Name, k.Importance))
			}
		}
	}
	if len(problems) > 0 {
		c.fail("descriptor", "%s", strings.Join(problems, "; "))
		return
	}
	c.pass("descriptor", "versions, config key names, types, defaults and importances are valid")
}

// section checks that a module's descriptor section, if it has one, says what its wc_describe
// does: a worker lists the module from the section without calling it (sdk/ABI.md §3.1).
func (c *checker) section(ps []Plugin) {
	b, err := os.ReadFile(ps[0].Module)
	if err != nil {
		c.fail("descriptor section", "%s", err)
		return
	}
	desc, ok, err := descriptorSection(b)
	if err != nil {
		c.fail("descriptor section", "a worker would skip this module: %s", err)
		return
	}
	if !ok {
		return
	}
	m := &module{path: ps[0].Module}
	if err := c.h.parseDescriptor(m, desc); err != nil {
		c.fail("descriptor section", "a worker would skip this module: custom section %s: %s", DescriptorSection, err)
		return
	}
	byClass := func(a, b Plugin) int { return strings.Compare(a.Class, b.Class) }
	slices.SortFunc(m.plugins, byClass)
	called := slices.SortedFunc(slices.Values(ps), byClass)
	if !reflect.DeepEqual(m.plugins, called) {
		c.fail("descriptor section", "the %s section does not say what wc_describe returns, and a worker lists the module from the section: write it again with wasmconnect plugin embed (sdk/ABI.md §3.1)", DescriptorSection)
		return
	}
	c.pass("descriptor section", "%s says what wc_describe returns", DescriptorSection)
}

// validate asks the plugin to validate an empty config: it must answer (required keys missing,
// say), not trap or fail.
func (c *checker) validate(ctx context.Context, p Plugin) {
	name := "VALIDATE " + p.Name
	errs, err := c.h.Validate(ctx, p, map[string]string{})
	if err != nil {
		c.fail(name, "VALIDATE of an empty config must report problems per key, not fail, but %s", callProblem(err))
		return
	}
	var keys []string
	for k, msgs := range errs {
		if len(msgs) > 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	if len(keys) == 0 {
		c.pass(name, "an empty config is valid")
		return
	}
	c.pass(name, "an empty config has problems in %s", strings.Join(keys, ", "))
}

// errorPaths sends the requests every module must refuse with an error result, on one instance,
// and then checks that the instance still answers.
func (c *checker) errorPaths(ctx context.Context, p Plugin) {
	m, err := c.h.moduleOf(p)
	if err != nil {
		c.fail("error paths", "%v", err)
		return
	}
	in, err := c.h.instantiate(ctx, m, c.h.log, nil)
	if err != nil {
		c.fail("error paths", "instantiating the module failed: %v", err)
		return
	}
	defer in.close(ctx, nil)
	in.mu.Lock()
	defer in.mu.Unlock()
	raw := func(b string) func([]byte) []byte { return func(dst []byte) []byte { return append(dst, b...) } }
	for _, probe := range []struct {
		name   string
		op     wire.Op
		handle int32
		input  func([]byte) []byte
		why    string
	}{
		{"unknown op", wire.Op(99), 0, nil, "an unknown op must return an error result, so that later ops can be added (sdk/ABI.md §4)"},
		{"malformed OPEN", wire.OpOpen, 0, raw("{not json"), "OPEN of input that is not JSON must return an error result"},
		{"OPEN of an unknown plugin", wire.OpOpen, 0, appendJSON(wire.OpenRequest{Plugin: "no.such.Plugin", Role: wire.RoleTask, Config: map[string]string{}}),
			"OPEN naming a plugin the module does not have must return an error result"},
		{"POLL on an unknown handle", wire.OpPoll, 987654, nil, "an op on a handle that was never opened must return an error result"},
	} {
		_, err := in.call(ctx, p.Name, nil, probe.op, probe.handle, probe.input)
		var ge *GuestError
		switch {
		case err == nil:
			c.fail(probe.name, "the module answered with success; %s", probe.why)
		case errors.As(err, &ge):
			c.pass(probe.name, "error result: %s", firstLine(ge.Message))
		default:
			c.fail(probe.name, "%s, but %s", probe.why, callProblem(err))
			return // the instance is gone
		}
	}
	out, err := in.call(ctx, p.Name, nil, wire.OpValidate, 0, appendJSON(wire.ValidateRequest{Plugin: p.Name, Config: map[string]string{}}))
	if err != nil {
		c.fail("after errors", "an error result must leave the module usable, but VALIDATE after them failed: %s", callProblem(err))
		return
	}
	c.pass("after errors", "the module still answers VALIDATE (%d bytes)", len(out))
}

// roundTrip opens p as a worker would, with an empty config (plus converter.type for a
// converter), and, when the plugin accepts that, sends it a batch of its kind. A clean refusal of
// the empty config is fine: a plugin may need settings; a trap, a timeout or a malformed result is
// not.
func (c *checker) roundTrip(ctx context.Context, p Plugin) {
	name := fmt.Sprintf("%s %s", strings.ToUpper(string(p.Kind)), p.Name)
	// One session for all plugins (a Go guest instance costs milliseconds), a new one after a
	// problem: its instance may have trapped.
	if c.sess == nil {
		c.sess = c.h.NewSession(Env{Connector: "plugin-check"})
	}
	s := c.sess
	defer func() {
		if len(c.steps) > 0 && c.steps[len(c.steps)-1].Problem != "" {
			s.Close(ctx)
			c.sess = nil
		}
	}()
	role := map[wire.Kind]wire.Role{wire.KindSource: wire.RoleConnector, wire.KindSink: wire.RoleConnector,
		wire.KindConverter: wire.RoleConverter, wire.KindTransformation: wire.RoleTransformation, wire.KindPredicate: wire.RolePredicate}[p.Kind]
	cfg := map[string]string{}
	if p.Kind == wire.KindConverter {
		cfg["converter.type"] = "value"
	}
	o, err := s.Open(ctx, p, role, cfg)
	refused, problem := openOutcome(err)
	if refused != "" && fillRequired(p.Config, cfg) {
		// A plugin may need settings: try again with a value of its type for each required key.
		o, err = s.Open(ctx, p, role, cfg)
		if refused2, problem2 := openOutcome(err); problem2 != "" {
			c.fail(name, "OPEN (%s, config %v): %s", role, cfg, problem2)
			return
		} else if refused2 != "" {
			c.pass(name, "OPEN with an empty config and with %v are refused cleanly (%s); no batch sent", cfg, refused2)
			return
		}
		refused = ""
	}
	if problem != "" {
		c.fail(name, "OPEN (%s, empty config): %s", role, problem)
		return
	} else if refused != "" {
		c.pass(name, "OPEN with an empty config is refused cleanly (%s); no batch sent", refused)
		return
	}
	detail, problem := c.batch(ctx, s, p, o)
	if problem != "" {
		c.fail(name, "%s", problem)
		return
	}
	if err := o.Close(ctx); err != nil {
		c.fail(name, "CLOSE failed: %s", callProblem(err))
		return
	}
	c.pass(name, "%s; CLOSE", detail)
}

// fillRequired sets each required key without a default to a value of its type, and says
// whether it set any.
func fillRequired(keys []wire.ConfigKey, cfg map[string]string) bool {
	sample := map[configdef.Type]string{configdef.Int: "1", configdef.Short: "1", configdef.Long: "1", configdef.Double: "1.0",
		configdef.Boolean: "true", configdef.List: "plugin-check"}
	set := false
	for _, k := range keys {
		if k.Required && k.DefaultValue == nil {
			v, ok := sample[configdef.Type(k.Type)]
			if !ok {
				v = "plugin-check"
			}
			cfg[k.Name], set = v, true
		}
	}
	return set
}

// openOutcome sorts an OPEN's error: a clean refusal (an error result) or a problem.
func openOutcome(err error) (refused, problem string) {
	var ge *GuestError
	switch {
	case err == nil:
		return "", ""
	case errors.As(err, &ge) && !strings.HasPrefix(ge.Message, "malformed result"):
		return firstLine(ge.Message), ""
	default:
		return "", callProblem(err)
	}
}

var checkRecords = []wire.Record{
	{Topic: "plugin-check", Partition: 0, Offset: 0, Timestamp: 1700000000000, Key: wire.String("k0"), Value: wire.String("hello"),
		Headers: []wire.Header{{Key: "h", Value: wire.String("v")}}},
	{Topic: "plugin-check", Partition: 0, Offset: 1, Timestamp: 1700000000001, Key: wire.Null(), Value: wire.Null()}, // a tombstone
}

// batch runs the calls of p's kind on o and says what came back, or what is wrong.
func (c *checker) batch(ctx context.Context, s *Session, p Plugin, o *Object) (detail, problem string) {
	switch p.Kind {
	case wire.KindConverter:
		for _, v := range []wire.Data{wire.String("hello"), wire.Bytes([]byte("hello"))} {
			bs, err := o.FromConnect(ctx, []wire.TopicData{{Topic: "plugin-check", Value: v}})
			if refused, problem := openOutcome(err); problem != "" {
				return "", "FROM_CONNECT: " + problem
			} else if refused != "" {
				continue // a converter may take only some types (ByteArrayConverter: bytes)
			}
			back, err := o.ToConnect(ctx, []wire.TopicBytes{{Topic: "plugin-check", Bytes: bs[0]}})
			if _, problem := openOutcome(err); problem != "" {
				return "", "TO_CONNECT of what FROM_CONNECT wrote: " + problem
			} else if err != nil {
				return "", fmt.Sprintf("TO_CONNECT of what FROM_CONNECT wrote (%q) failed: %s", bs[0], firstLine(err.Error()))
			}
			if len(back) != 1 || !strings.Contains(string(back[0].Bytes), "hello") {
				return "", fmt.Sprintf("the round trip FROM_CONNECT, TO_CONNECT of %q gave %+v", v.Bytes, back)
			}
			return fmt.Sprintf("FROM_CONNECT and TO_CONNECT round trip (%d bytes)", len(bs[0])), ""
		}
		return "", "FROM_CONNECT refused both a string and bytes: a converter must take at least one of them"
	case wire.KindTransformation:
		out, failed, err := o.Transform(ctx, checkRecords)
		if _, problem := openOutcome(err); problem != "" {
			return "", "TRANSFORM: " + problem
		} else if err != nil {
			return fmt.Sprintf("TRANSFORM refused the batch cleanly (%s)", firstLine(err.Error())), ""
		}
		return fmt.Sprintf("TRANSFORM of %d records: %d out, %d failed", len(checkRecords), len(out), len(failed)), ""
	case wire.KindPredicate:
		matches, failed, err := o.Test(ctx, checkRecords)
		if _, problem := openOutcome(err); problem != "" {
			return "", "TEST: " + problem
		} else if err != nil {
			return fmt.Sprintf("TEST refused the batch cleanly (%s)", firstLine(err.Error())), ""
		}
		return fmt.Sprintf("TEST of %d records: matches %v, %d failed", len(checkRecords), matches, len(failed)), ""
	}
	// A connector: its task configs, then one task and one batch.
	cfgs, err := o.TaskConfigs(ctx, 1)
	if refused, problem := openOutcome(err); problem != "" {
		return "", "TASK_CONFIGS: " + problem
	} else if refused != "" {
		return fmt.Sprintf("TASK_CONFIGS refused cleanly (%s)", refused), ""
	}
	if len(cfgs) == 0 {
		return "TASK_CONFIGS: no tasks", ""
	}
	task, err := s.Open(ctx, p, wire.RoleTask, cfgs[0])
	if refused, problem := openOutcome(err); problem != "" {
		return "", "OPEN of a task with the connector's task config: " + problem
	} else if refused != "" {
		return fmt.Sprintf("TASK_CONFIGS gave 1 task; its OPEN is refused cleanly (%s)", refused), ""
	}
	defer task.Close(ctx)
	if p.Kind == wire.KindSource {
		recs, err := task.Poll(ctx)
		if refused, problem := openOutcome(err); problem != "" {
			return "", "POLL: " + problem
		} else if refused != "" {
			return fmt.Sprintf("task opened; POLL failed cleanly (%s)", refused), ""
		}
		if err := task.Commit(ctx, nil); err != nil {
			return "", "COMMIT: " + callProblem(err)
		}
		return fmt.Sprintf("task opened; POLL gave %d record(s); COMMIT", len(recs)), ""
	}
	if err := task.Put(ctx, checkRecords); err != nil {
		if refused, problem := openOutcome(err); problem != "" {
			return "", "PUT: " + problem
		} else {
			return fmt.Sprintf("task opened; PUT failed cleanly (%s)", refused), ""
		}
	}
	if err := task.Flush(ctx, []wire.TopicPartitionOffset{{Topic: "plugin-check", Partition: 0, Offset: 2}}); err != nil {
		if _, problem := openOutcome(err); problem != "" {
			return "", "FLUSH: " + problem
		}
	}
	return fmt.Sprintf("task opened; PUT of %d records; FLUSH", len(checkRecords)), ""
}

// callProblem says in plain words why a call did not return a result.
func callProblem(err error) string {
	var te *TrapError
	if errors.As(err, &te) {
		detail := "\n    " + strings.ReplaceAll(strings.TrimRight(te.Error(), "\n"), "\n", "\n    ")
		switch {
		case te.Timeout:
			return "the call did not return within the call timeout (a loop that never ends?); a worker fails the task:" + detail
		case te.OutOfMemory:
			return "the module ran out of memory; a worker fails the task:" + detail
		}
		return "the module trapped (a panic or a WebAssembly fault) where it must return an error result; a worker fails the task:" + detail
	}
	return err.Error()
}
