package worker

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/configprovider"
	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/kafkaclient"
	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
)

// Validate checks a connector config before it is accepted (create, update, PATCH): it is
// ValidateConfig's result turned into Kafka's 400, "Connector configuration is invalid and contains
// the following N error(s): ...", listing every error in the order of the validation result.
func (w *Worker) Validate(ctx context.Context, cfg map[string]string) (connect.ConnectorType, error) {
	infos, typ, err := w.ValidateConfig(ctx, cfg)
	if err != nil {
		return typ, err
	}
	return typ, InvalidConfig(infos)
}

// InvalidConfig returns Kafka's 400 for a validation result with errors, or nil.
func InvalidConfig(infos connect.ConfigInfos) error {
	if infos.ErrorCount == 0 {
		return nil
	}
	var msgs []string
	for _, ci := range infos.Configs {
		if ci.Value != nil {
			msgs = append(msgs, ci.Value.Errors...)
		}
	}
	return connect.BadRequest("Connector configuration is invalid and contains the following %d error(s):\n%s\n"+
		"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`",
		infos.ErrorCount, strings.Join(msgs, "\n"))
}

// ValidateConfig checks a connector config key by key, as Kafka's
// AbstractHerder.validateConnectorConfig does, and returns the body of
// PUT /connector-plugins/{plugin}/config/validate:
//
//   - the framework's keys (SourceConnectorConfig or SinkConnectorConfig), parsed as their types
//     and checked with Kafka's validators, plus transforms.<alias>.* and predicates.<alias>.*
//     keys for each alias, with the transformation's or predicate's own keys;
//   - a sink's topics / topics.regex / dead letter queue rules, and, in a distributed worker, a
//     consumer group equal to the worker's group.id;
//   - a connector's own plugin.net.allow: it parses and narrows the worker's grant;
//   - the plugin's own keys, with the host's checks and the plugin's VALIDATE; a plugin key
//     replaces a framework key of the same name, in its place;
//   - for a key.converter or value.converter the config sets, the converter's own keys under the
//     prefix, checked by the converter.
//
// The config may be partial. An unknown connector.class is a 400; an error means validation
// itself failed (a plugin trapped, say).
func (w *Worker) ValidateConfig(ctx context.Context, cfg map[string]string) (connect.ConfigInfos, connect.ConnectorType, error) {
	// As Kafka Connect, validate the config the plugins will see, with config-provider
	// placeholders (${env:X}...) resolved, but report the values as given: a secret stays a
	// placeholder in the answer.
	raw := cfg
	resolved, err := w.resolve(cfg)
	if err != nil {
		return connect.ConfigInfos{}, connect.TypeUnknown, connect.BadRequest("Connector configuration could not be resolved: %v", err)
	}
	cfg = resolved
	p, typ, err := w.ResolveConnector(cfg)
	if err != nil {
		return connect.ConfigInfos{}, typ, err
	}
	v := &validation{index: map[string]int{}, values: map[string]*connect.ConfigValueInfo{}}

	// The framework's keys, enriched with the transformations' and predicates' (Kafka's
	// ConnectorConfig.enrich, without requiring a full config).
	for _, k := range w.frameworkDefs(typ) {
		v.define(k, k.value(k.Name, cfg))
	}
	if err := w.enrich(ctx, v, cfg, "transforms", groupTransforms, wire.KindTransformation, "Transformation"); err != nil {
		return connect.ConfigInfos{}, typ, err
	}
	if err := w.enrich(ctx, v, cfg, "predicates", groupPredicates, wire.KindPredicate, "Predicate"); err != nil {
		return connect.ConfigInfos{}, typ, err
	}
	if typ == connect.TypeSink {
		sinkRules(v, cfg)
		w.sinkGroupRule(v, cfg)
	}
	if typ == connect.TypeSource {
		w.exactlyOnceRule(v, cfg)
	}
	w.createdTopicRule(v, cfg, typ)
	w.clientOverrideRule(v, cfg, typ)
	w.netAllowRule(ctx, v, cfg)
	v.groups = v.definedGroups()

	// The plugin's keys and checks (Kafka: connector.config() and connector.validate()).
	perKey, err := w.host.Validate(ctx, p, cfg)
	if err != nil {
		return connect.ConfigInfos{}, typ, fmt.Errorf("validating connector config with plugin %s: %w", p.Name, err)
	}
	for _, wk := range p.Config {
		k := pluginDef(wk)
		val := k.value(k.Name, cfg)
		val.Errors = union(val.Errors, perKey[k.Name])
		v.define(k, val)
		v.addGroup(k.Group)
	}
	v.otherErrors("", perKey, p.Config)

	infos := connect.ConfigInfos{Name: cfg["connector.class"], Groups: v.groups}
	for _, u := range v.undefined {
		infos.Configs = append(infos.Configs, connect.ConfigInfo{Value: u})
	}
	for _, k := range v.defs {
		d := k.ConfigKeyInfo
		infos.Configs = append(infos.Configs, connect.ConfigInfo{Definition: &d, Value: v.values[k.Name]})
	}

	// Converters the connector config names, with their own settings (Kafka 3.9's
	// validateConverterConfig); converters inherited from the worker are not checked here.
	for _, which := range []string{"key", "value"} {
		conv, err := w.converterInfos(ctx, cfg, which, v.values[which+".converter"])
		if err != nil {
			return connect.ConfigInfos{}, typ, err
		}
		for _, ci := range conv {
			if ci.Definition != nil && ci.Definition.Group != nil && !slices.Contains(infos.Groups, *ci.Definition.Group) {
				infos.Groups = append(infos.Groups, *ci.Definition.Group)
			}
		}
		infos.Configs = append(infos.Configs, conv...)
	}
	for _, ci := range infos.Configs {
		if ci.Value == nil {
			continue
		}
		if r, ok := raw[ci.Value.Name]; ok && configprovider.HasPlaceholder(r) {
			r := r
			ci.Value.Value = &r
		}
	}
	infos.CountErrors()
	return infos, typ, nil
}

// validation collects definitions in Kafka's order (a LinkedHashMap: redefining a key keeps its
// place) and one value per defined key, plus values with errors for keys nothing defines.
type validation struct {
	defs      []configKey
	index     map[string]int
	values    map[string]*connect.ConfigValueInfo
	undefined []*connect.ConfigValueInfo
	groups    []string
}

func (v *validation) define(k configKey, val connect.ConfigValueInfo) {
	if i, ok := v.index[k.Name]; ok {
		v.defs[i] = k
	} else {
		v.index[k.Name] = len(v.defs)
		v.defs = append(v.defs, k)
	}
	v.values[k.Name] = &val
}

// addError adds a message to a key's value, creating an undefined entry if no key has the name.
func (v *validation) addError(name string, msg string) {
	if val, ok := v.values[name]; ok {
		val.Errors = append(val.Errors, msg)
		return
	}
	for _, u := range v.undefined {
		if u.Name == name {
			u.Errors = append(u.Errors, msg)
			return
		}
	}
	v.undefined = append(v.undefined, &connect.ConfigValueInfo{Name: name, Visible: true, Errors: []string{msg}})
}

// otherErrors adds the errors a plugin reported for keys it does not define (own lists those it
// does), sorted by key: to the key's value if another definition has it, else as an undefined
// key.
func (v *validation) otherErrors(prefix string, perKey map[string][]string, own []wire.ConfigKey) {
	for _, k := range slices.Sorted(maps.Keys(perKey)) {
		if slices.ContainsFunc(own, func(c wire.ConfigKey) bool { return c.Name == k }) {
			continue
		}
		for _, msg := range perKey[k] {
			if val, ok := v.values[prefix+k]; !ok || !slices.Contains(val.Errors, msg) {
				v.addError(prefix+k, msg)
			}
		}
	}
}

func (v *validation) definedGroups() []string {
	var groups []string
	for _, k := range v.defs {
		if k.Group != nil && !slices.Contains(groups, *k.Group) {
			groups = append(groups, *k.Group)
		}
	}
	return groups
}

func (v *validation) addGroup(g *string) {
	if g != nil && !slices.Contains(v.groups, *g) {
		v.groups = append(v.groups, *g)
	}
}

// union returns a followed by the messages of b that a does not have.
func union(a, b []string) []string {
	for _, m := range b {
		if !slices.Contains(a, m) {
			a = append(a, m)
		}
	}
	return a
}

// enrich adds, for each alias listed in aliasKey (transforms or predicates), the alias's
// <aliasKey>.<alias>.type key and, if it names a plugin of the right kind, that plugin's keys
// under <aliasKey>.<alias>., as Kafka's ConnectorConfig.EnrichablePlugin does. The plugin's own
// checks (its VALIDATE) add their errors to those keys.
func (w *Worker) enrich(ctx context.Context, v *validation, cfg map[string]string, aliasKey, aliasGroup string, kind wire.Kind, javaType string) error {
	raw, ok := cfg[aliasKey]
	if !ok {
		return nil
	}
	list, _ := parseValue(&configKey{ConfigKeyInfo: connect.ConfigKeyInfo{Type: "LIST"}}, aliasKey, raw)
	var classes []string
	for _, p := range w.host.Plugins() {
		if p.Kind == kind {
			classes = append(classes, p.Class)
		}
	}
	lower := strings.ToLower(javaType)
	seen := map[string]bool{}
	for _, alias := range list.List {
		if seen[alias] {
			continue
		}
		seen[alias] = true
		prefix := aliasKey + "." + alias + "."
		group := aliasGroup + ": " + alias
		typeKey := def(prefix+"type", "CLASS", nil, true, "HIGH", "Class for the '"+alias+"' "+lower+".", group, 0, "LONG", javaType+" type for "+alias)
		typeKey.Dependents = []string{}
		typeKey.class = w.anyPluginClass
		typeKey.recommended = classes
		typeKey.check = func(name string, val configdef.Value) []string {
			if kind == wire.KindTransformation {
				if _, neg := cfg[prefix+"negate"]; neg {
					if _, pred := cfg[prefix+"predicate"]; !pred {
						return []string{"Config '" + prefix + "negate' was provided but there is no config '" + prefix + "predicate' defining a predicate to be negated."}
					}
				}
			}
			if val.Null {
				return []string{invalid(name, "null", "Not a "+javaType)}
			}
			if _, err := w.host.Resolve(val.Str, kind); err != nil {
				return []string{invalid(name, val.Java(), "Not a "+javaType)}
			}
			return nil
		}
		v.define(typeKey, typeKey.value(typeKey.Name, cfg))

		p, err := w.host.Resolve(strings.TrimSpace(cfg[prefix+"type"]), kind)
		if err != nil {
			continue // requireFullConfig=false: only the type key, with its errors
		}
		var child []configKey
		if kind == wire.KindTransformation {
			child = append(child,
				configKey{ConfigKeyInfo: connect.ConfigKeyInfo{Name: "predicate", Type: "STRING", DefaultValue: str(""), Importance: "MEDIUM",
					Documentation: "The alias of a predicate used to determine whether to apply this transformation.", Order: -1, Width: "NONE", DisplayName: "predicate"},
					check: declaredPredicate(cfg)},
				configKey{ConfigKeyInfo: connect.ConfigKeyInfo{Name: "negate", Type: "BOOLEAN", DefaultValue: str("false"), Importance: "MEDIUM",
					Documentation: "Whether the configured predicate should be negated.", Order: -1, Width: "NONE", DisplayName: "negate"}})
		}
		for _, k := range p.Config {
			if kind == wire.KindTransformation && (k.Name == "predicate" || k.Name == "negate") {
				continue // masked by the implicit keys, as in Kafka
			}
			child = append(child, pluginDef(k))
		}
		sub := map[string]string{}
		for k, val := range cfg {
			if rest, ok := strings.CutPrefix(k, prefix); ok && rest != "type" &&
				(kind != wire.KindTransformation || (rest != "predicate" && rest != "negate")) {
				sub[rest] = val
			}
		}
		perKey, err := w.host.Validate(ctx, p, sub)
		if err != nil {
			return fmt.Errorf("validating %s with plugin %s: %w", strings.TrimSuffix(prefix, "."), p.Name, err)
		}
		for _, k := range embed(prefix, group, 1, child) {
			val := k.value(k.Name, cfg)
			short := strings.TrimPrefix(k.Name, prefix)
			// The plugin words its required and type errors with its own key names; Kafka, which
			// parses the embedded keys itself, with the full names (as val has them).
			var shortMsg string
			if raw, ok := cfg[k.Name]; ok {
				_, shortMsg = parseValue(&k, short, raw)
			}
			for _, msg := range perKey[short] {
				if msg != missing(short) && msg != shortMsg && !slices.Contains(val.Errors, msg) {
					val.Errors = append(val.Errors, msg)
				}
			}
			v.define(k, val)
		}
		v.otherErrors(prefix, perKey, p.Config)
	}
	return nil
}

// declaredPredicate is the validator of transforms.<alias>.predicate: the alias of a predicate the
// config declares in predicates, which is what the task will look up when it starts.
func declaredPredicate(cfg map[string]string) func(string, configdef.Value) []string {
	return func(name string, v configdef.Value) []string {
		if v.Null || v.Str == "" || slices.Contains(config.SplitList(cfg["predicates"]), v.Str) {
			return nil
		}
		return []string{invalid(name, v.Str, undeclaredPredicate)}
	}
}

// sinkRules are Kafka's SinkConnectorConfig.validate: exactly one of topics and topics.regex, and
// a dead letter queue topic that is not one of the topics consumed.
func sinkRules(v *validation, cfg map[string]string) {
	topics, regex := cfg["topics"], cfg["topics.regex"]
	dlq := strings.TrimSpace(cfg["errors.deadletterqueue.topic.name"])
	hasTopics, hasRegex := strings.TrimSpace(topics) != "", strings.TrimSpace(regex) != ""
	both := func(msg string) {
		v.addError("topics", msg)
		v.addError("topics.regex", msg)
	}
	if hasTopics && hasRegex {
		both("topics and topics.regex are mutually exclusive options, but both are set.")
	}
	if !hasTopics && !hasRegex {
		both("Must configure one of topics or topics.regex")
	}
	if dlq == "" {
		return
	}
	if hasTopics {
		var list []string
		for _, t := range config.SplitList(topics) {
			if !slices.Contains(list, t) {
				list = append(list, t)
			}
		}
		if slices.Contains(list, dlq) {
			v.addError("topics", fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('topics=[%s]') consumed by the connector",
				dlq, strings.Join(list, ", ")))
		}
	}
	if hasRegex {
		if re, err := regexp.Compile("^(?:" + regex + ")$"); err == nil && re.MatchString(dlq) {
			v.addError("topics.regex", fmt.Sprintf("The DLQ topic '%s' may not be matched by the regex for the topics ('topics.regex=%s') consumed by the connector",
				dlq, regex))
		}
	}
}

// createdTopicRule checks the topics the worker creates for a connector, if they are missing: a
// source's own offsets topic (offsets.storage.topic, distributed workers only) and a sink's dead
// letter queue. Each must be a name the broker accepts, and neither may be one of the worker's
// internal topics, whose readers would take the connector's records for their own (offsets in
// the config topic, failed records in the status topic). The worker's offsets topic is a fine
// offsets.storage.topic: it means the worker's store, as in Kafka.
func (w *Worker) createdTopicRule(v *validation, cfg map[string]string, typ connect.ConnectorType) {
	if w.cfg == nil {
		return
	}
	internal := w.cfg.Topics
	check := func(key string, forbidden ...config.Topic) {
		name := strings.TrimSpace(cfg[key])
		if name == "" {
			return
		}
		if err := config.CheckTopicName(name); err != nil {
			v.addError(key, invalid(key, name, err.Error()))
			return
		}
		for _, t := range forbidden {
			if t.Name == name {
				v.addError(key, invalid(key, name, "it is the worker's "+t.Key+", not a connector's to write to"))
			}
		}
	}
	switch {
	case typ == connect.TypeSource && w.cfg.GroupID != "":
		check("offsets.storage.topic", internal.Config, internal.Status)
	case typ == connect.TypeSink:
		check("errors.deadletterqueue.topic.name", internal.Config, internal.Offsets, internal.Status)
	}
}

// sinkGroupRule is DistributedHerder.validateSinkConnectorGroupId: a sink's consumer group must not
// be the Connect cluster's own group.
func (w *Worker) sinkGroupRule(v *validation, cfg map[string]string) {
	if w.cfg == nil || w.cfg.GroupID == "" {
		return // standalone
	}
	const key = "consumer.override.group.id"
	group, ok := cfg[key]
	if !ok {
		name, named := cfg["name"]
		if !named {
			name = "null"
		}
		group = "connect-" + name
	}
	if group == w.cfg.GroupID {
		v.addError(key, fmt.Sprintf("Consumer group %s conflicts with Connect worker group %s", group, w.cfg.GroupID))
	}
}

// clientOverrideRule is Kafka's validateClientOverrides: the connector's producer.override.*
// (source, or sink with a dead letter queue), consumer.override.* (sink) and admin.override.*
// keys, checked against the worker's connector.client.config.override.policy, and for their
// values.
func (w *Worker) clientOverrideRule(v *validation, cfg map[string]string, typ connect.ConnectorType) {
	roles := []kafkaclient.Role{kafkaclient.Producer, kafkaclient.Admin}
	if typ == connect.TypeSink {
		roles = []kafkaclient.Role{kafkaclient.Consumer}
		if strings.TrimSpace(cfg["errors.deadletterqueue.topic.name"]) != "" {
			roles = append(roles, kafkaclient.Producer, kafkaclient.Admin)
		}
	}
	for _, role := range roles {
		errs := w.clients.OverrideErrors(cfg, role)
		for _, k := range slices.Sorted(maps.Keys(errs)) {
			for _, msg := range errs[k] {
				v.addError(k, msg)
			}
		}
	}
}

// converterInfos validates the converter a connector config sets for which ("key" or "value"),
// if it sets one and it resolved: the converter's keys under "<which>.converter.", with the
// values given there (and converter.type=<which>), checked by the converter itself.
func (w *Worker) converterInfos(ctx context.Context, cfg map[string]string, which string, classValue *connect.ConfigValueInfo) ([]connect.ConfigInfo, error) {
	key := which + ".converter"
	if _, ok := cfg[key]; !ok || classValue == nil || len(classValue.Errors) > 0 || classValue.Value == nil {
		return nil, nil
	}
	p, err := w.host.Resolve(*classValue.Value, wire.KindConverter)
	if err != nil {
		return nil, nil
	}
	prefix := key + "."
	sub := map[string]string{}
	for k, val := range cfg {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			sub[rest] = val
		}
	}
	if _, ok := sub["converter.type"]; !ok {
		sub["converter.type"] = which
	}
	perKey, err := w.host.Validate(ctx, p, sub)
	if err != nil {
		return nil, fmt.Errorf("validating %s %s: %w", key, p.Class, err)
	}
	return prefixedInfos(prefix, p, sub, perKey), nil
}

// prefixedInfos is Kafka's prefixedConfigInfos: the plugin's keys and values, named with prefix,
// and its errors as it words them.
func prefixedInfos(prefix string, p wasmhost.Plugin, sub map[string]string, perKey map[string][]string) []connect.ConfigInfo {
	var out []connect.ConfigInfo
	for _, wk := range p.Config {
		k := pluginDef(wk)
		val := k.value(k.Name, sub)
		val.Name = prefix + k.Name
		val.Errors = perKey[k.Name]
		d := k.ConfigKeyInfo
		d.Name = prefix + k.Name
		out = append(out, connect.ConfigInfo{Definition: &d, Value: &val})
	}
	for _, k := range slices.Sorted(maps.Keys(perKey)) {
		if !slices.ContainsFunc(p.Config, func(c wire.ConfigKey) bool { return c.Name == k }) {
			out = append(out, connect.ConfigInfo{Value: &connect.ConfigValueInfo{Name: prefix + k, Visible: true, Errors: perKey[k]}})
		}
	}
	return out
}
