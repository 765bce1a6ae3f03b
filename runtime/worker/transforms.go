package worker

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient"
	"github.com/wasmconnect/wasmconnect/runtime/task"
	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// transformSpec is one transforms.<alias>.* block of a connector config.
type transformSpec struct {
	alias     string
	plugin    wasmhost.Plugin
	config    map[string]string // the block without its prefix, type, predicate and negate
	predicate *predicateSpec
	negate    bool
}

type predicateSpec struct {
	alias  string
	plugin wasmhost.Plugin
	config map[string]string
}

// undeclaredPredicate is why a transforms.<alias>.predicate naming no alias of predicates is refused,
// when the connector is validated and, should such a config be in the config topic, when a task starts.
const undeclaredPredicate = "no predicate with that alias is declared in predicates"

// transformSpecs reads Kafka Connect's transforms=a,b / transforms.a.type / transforms.a.predicate
// / transforms.a.negate / predicates=p / predicates.p.type keys and resolves every class.
func (w *Worker) transformSpecs(cfg map[string]string) ([]transformSpec, error) {
	var specs []transformSpec
	preds := map[string]*predicateSpec{}
	for _, alias := range config.SplitList(cfg["predicates"]) {
		prefix := "predicates." + alias + "."
		class := strings.TrimSpace(cfg[prefix+"type"])
		if class == "" {
			return nil, configdef.Missing(prefix + "type")
		}
		p, err := w.host.Resolve(class, wire.KindPredicate)
		if err != nil {
			return nil, configdef.Invalid(prefix+"type", class, err.Error())
		}
		preds[alias] = &predicateSpec{alias: alias, plugin: p, config: block(cfg, prefix, "type")}
	}
	for _, alias := range config.SplitList(cfg["transforms"]) {
		prefix := "transforms." + alias + "."
		class := strings.TrimSpace(cfg[prefix+"type"])
		if class == "" {
			return nil, configdef.Missing(prefix + "type")
		}
		p, err := w.host.Resolve(class, wire.KindTransformation)
		if err != nil {
			return nil, configdef.Invalid(prefix+"type", class, err.Error())
		}
		spec := transformSpec{alias: alias, plugin: p, config: block(cfg, prefix, "type", "predicate", "negate")}
		if name := strings.TrimSpace(cfg[prefix+"predicate"]); name != "" {
			pred, ok := preds[name]
			if !ok {
				return nil, configdef.Invalid(prefix+"predicate", name, undeclaredPredicate)
			}
			spec.predicate = pred
		}
		if n := strings.TrimSpace(cfg[prefix+"negate"]); n != "" {
			b, err := configdef.Parse(prefix+"negate", configdef.Boolean, n)
			if err != nil {
				return nil, err
			}
			spec.negate = b.Str == "true"
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// block returns the keys under prefix, without it and without the keys the framework handles.
func block(cfg map[string]string, prefix string, framework ...string) map[string]string {
	out := map[string]string{}
	for k, v := range cfg {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || rest == "" {
			continue
		}
		skip := false
		for _, f := range framework {
			skip = skip || rest == f
		}
		if !skip {
			out[rest] = v
		}
	}
	return out
}

// chain opens a connector's transforms and predicates in a task's session. All standard
// transforms live in one module, so a chain of any length costs one instance per task.
func (w *Worker) chain(ctx context.Context, sess *wasmhost.Session, cfg map[string]string) (task.Chain, error) {
	specs, err := w.transformSpecs(cfg)
	if err != nil {
		return nil, err
	}
	var chain task.Chain
	var fused []wasmhost.ChainStep
	opened := map[string]*wasmhost.Object{}
	for _, s := range specs {
		t, err := sess.Open(ctx, s.plugin, wire.RoleTransformation, s.config)
		if err != nil {
			return nil, fmt.Errorf("configuring transform %s (%s): %w", s.alias, s.plugin.Class, err)
		}
		step := task.Step{Alias: s.alias, Class: s.plugin.Class, Transform: t, Negate: s.negate}
		fstep := wasmhost.ChainStep{Transform: t, Negate: s.negate}
		if s.predicate != nil {
			p, ok := opened[s.predicate.alias]
			if !ok {
				obj, err := sess.Open(ctx, s.predicate.plugin, wire.RolePredicate, s.predicate.config)
				if err != nil {
					return nil, fmt.Errorf("configuring predicate %s (%s): %w", s.predicate.alias, s.predicate.plugin.Class, err)
				}
				p = obj
				opened[s.predicate.alias] = p
			}
			step.Predicate, fstep.Predicate = p, p
		}
		chain = append(chain, step)
		fused = append(fused, fstep)
	}
	// One guest call for the whole chain when its plugins share an instance that can run it.
	if fc := wasmhost.NewChain(fused); fc != nil {
		chain[0].Fused = fc
	}
	return chain, nil
}

// convertingChain is a source task's chain and converters in one guest call, when the chain runs in
// one call and the converters are objects of its instance (the standard ones all live in the
// transforms module); nil otherwise. A nil result must stay a nil interface.
func convertingChain(chain task.Chain, key, value *wasmhost.Object) task.ConvertingChain {
	if len(chain) == 0 {
		return nil
	}
	fused, ok := chain[0].Fused.(*wasmhost.Chain)
	if !ok {
		return nil
	}
	if cc := wasmhost.NewConvertingChain(fused, key, value); cc != nil {
		return cc
	}
	return nil
}

// errorPolicy builds a task's error handling; for a sink with a dead letter queue it creates the
// topic if needed and a producer, which close releases.
func (w *Worker) errorPolicy(ctx context.Context, id connect.TaskID, typ connect.ConnectorType, cfg map[string]string) (task.ErrorPolicy, func(), error) {
	p, err := task.ParseErrorPolicy(cfg)
	if err != nil {
		return p, func() {}, err
	}
	topic := strings.TrimSpace(cfg["errors.deadletterqueue.topic.name"])
	if typ != connect.TypeSink || topic == "" {
		return p, func() {}, nil
	}
	rf := int16(3)
	if v := strings.TrimSpace(cfg["errors.deadletterqueue.topic.replication.factor"]); v != "" {
		n, err := strconv.ParseInt(v, 10, 16)
		if err != nil || n == 0 || n < -1 {
			return p, func() {}, fmt.Errorf("Invalid value %s for configuration errors.deadletterqueue.topic.replication.factor: must be a positive number or -1", v)
		}
		rf = int16(n)
	}
	settings, err := w.client(id, cfg, kafkaclient.Producer)
	if err != nil {
		return p, func() {}, err
	}
	producer, err := kgo.NewClient(slices.Concat(w.opts,
		[]kgo.Opt{kgo.ClientID(fmt.Sprintf("connector-dlq-producer-%s-%d", id.Connector, id.Task)), kgo.RequiredAcks(kgo.AllISRAcks())}, settings.Opts)...)
	if err != nil {
		return p, func() {}, fmt.Errorf("creating the dead letter queue producer: %w", err)
	}
	// As Kafka Connect, create the queue's topic with the configured replication factor.
	if _, err := kadm.NewClient(producer).CreateTopic(ctx, 1, rf, nil, topic); err != nil && !isTopicExists(err) {
		producer.Close()
		return p, func() {}, fmt.Errorf("creating dead letter queue topic %s with replication factor %d (errors.deadletterqueue.topic.replication.factor): %w", topic, rf, err)
	}
	p.DLQ = &task.DeadLetterQueue{
		Topic: topic, Producer: producer, Connector: id.Connector, Task: id.Task,
		ContextHeaders: strings.EqualFold(strings.TrimSpace(cfg["errors.deadletterqueue.context.headers.enable"]), "true"),
	}
	return p, producer.Close, nil
}

func isTopicExists(err error) bool {
	return err == kerr.TopicAlreadyExists || strings.Contains(err.Error(), "TOPIC_ALREADY_EXISTS")
}
