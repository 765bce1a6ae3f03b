package worker

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/sdk/go/configdef"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// This file is the part of Kafka's ConfigDef that connector validation needs: config definitions
// with their validators, parsing a value as its type, and the messages Kafka words its errors in.

// configKey is a definition plus the checks Kafka's ConfigDef runs on its value.
type configKey struct {
	connect.ConfigKeyInfo
	// class resolves the value of a CLASS key to a class name; nil keeps the value as given.
	class func(name string) (string, bool)
	// check is the key's validator. Like Kafka's, it runs on the parsed value even when that is
	// null (missing, or it did not parse), and returns complete messages.
	check func(name string, v configdef.Value) []string
	// recommended are the values a UI may offer (Kafka's Recommender).
	recommended []string
}

// invalid and missing are Kafka's ConfigException texts, as the validators' results hold them.
func invalid(name string, value any, msg string) string {
	return configdef.Invalid(name, value, msg).Msg
}

func missing(name string) string { return configdef.Missing(name).Msg }

// parseValue is ConfigDef.parseType for a value given as a string (configdef.Parse), with a CLASS
// resolved by the key's class; it returns Kafka's message for a value that does not parse.
func parseValue(k *configKey, name, raw string) (configdef.Value, string) {
	v, err := configdef.Parse(name, configdef.Type(k.Type), raw)
	if err != nil {
		return v, err.Error()
	}
	if v.Type == configdef.Class && k.class != nil {
		class, ok := k.class(v.Str)
		if !ok {
			return configdef.Value{Null: true, Type: v.Type}, invalid(name, raw, "Class "+raw+" could not be found.")
		}
		v.Str = class
	}
	return v, ""
}

// value runs ConfigDef's validation of one key: the given value or the default, parsed, then the
// validator. name is the key's full name (the definition's may lack a prefix).
func (k *configKey) value(name string, cfg map[string]string) connect.ConfigValueInfo {
	out := connect.ConfigValueInfo{Name: name, Visible: true, RecommendedValues: k.recommended}
	v := configdef.Value{Null: true}
	if raw, ok := cfg[name]; ok {
		var msg string
		if v, msg = parseValue(k, name, raw); msg != "" {
			out.Errors = append(out.Errors, msg)
		}
	} else if k.Required {
		out.Errors = append(out.Errors, missing(name))
	} else if k.DefaultValue != nil {
		v, _ = parseValue(k, name, *k.DefaultValue)
	}
	if k.check != nil {
		out.Errors = append(out.Errors, k.check(name, v)...)
	}
	out.Value = v.Display()
	return out
}

// Validators, with the messages of Kafka's ConfigDef validators.

func nonEmptyStringWithoutControlChars(name string, v configdef.Value) []string {
	if v.Null {
		return nil // a missing name is reported as missing
	}
	if v.Str == "" {
		return []string{invalid(name, v.Str, "String may not be empty")}
	}
	var codes []string
	for _, r := range v.Str {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) { // Java's Character.isISOControl
			codes = append(codes, strconv.Itoa(int(r)))
		}
	}
	if len(codes) > 0 {
		return []string{invalid(name, v.Str, "String may not contain control sequences but had the following ASCII chars: "+strings.Join(codes, ", "))}
	}
	return nil
}

func atLeast(min float64, nullOK bool) func(string, configdef.Value) []string {
	return func(name string, v configdef.Value) []string {
		switch {
		case v.Null && nullOK:
			return nil
		case v.Null:
			return []string{invalid(name, "null", "Value must be non-null")}
		case v.Num < min:
			return []string{invalid(name, v.Java(), "Value must be at least "+strconv.FormatFloat(min, 'f', -1, 64))}
		}
		return nil
	}
}

func oneOf(values ...string) func(string, configdef.Value) []string {
	return validString(configdef.ValidString{Values: values})
}

func oneOfIgnoreCase(values ...string) func(string, configdef.Value) []string {
	return validString(configdef.ValidString{Values: values, IgnoreCase: true})
}

// validString runs ValidString as Kafka does, on null too.
func validString(vs configdef.ValidString) func(string, configdef.Value) []string {
	return func(name string, v configdef.Value) []string {
		if v.Null || !vs.Allows(v.Str) {
			return []string{invalid(name, v.Java(), vs.Message())}
		}
		return nil
	}
}

func uniqueAliases(name string, v configdef.Value) []string {
	if v.Null {
		return []string{invalid(name, "null", "entry must be non null")}
	}
	seen := map[string]bool{}
	for _, a := range v.List {
		if seen[a] {
			return []string{invalid(name, v.Java(), "Duplicate alias provided.")}
		}
		seen[a] = true
	}
	return nil
}

func nonEmptyString(name string, v configdef.Value) []string {
	if !v.Null && v.Str == "" {
		return []string{invalid(name, v.Str, "String must be non-empty")}
	}
	return nil
}

func validRegex(name string, v configdef.Value) []string {
	if v.Null {
		return nil
	}
	if _, err := regexp.Compile(v.Str); err != nil {
		return []string{invalid(name, v.Str, "Invalid regex: "+err.Error())}
	}
	return nil
}

// Kafka's groups of framework keys.
const (
	groupCommon        = "Common"
	groupTransforms    = "Transforms"
	groupPredicates    = "Predicates"
	groupErrors        = "Error Handling"
	groupTopicCreation = "Topic Creation"
	groupExactlyOnce   = "Exactly Once Support"
	groupOffsetsTopic  = "offsets.topic"
)

func def(name, typ string, dflt *string, required bool, importance, doc, group string, order int, width, display string) configKey {
	g := group
	return configKey{ConfigKeyInfo: connect.ConfigKeyInfo{
		Name: name, Type: typ, Required: required, DefaultValue: dflt, Importance: importance, Documentation: doc,
		Group: &g, Order: order, Width: width, DisplayName: display,
	}}
}

func str(s string) *string { return &s }

const converterDoc = "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka." +
	" This controls the format of the %s in messages written to or read from Kafka, and since this is" +
	" independent of connectors it allows any connector to work with any serialization format." +
	" Examples of common formats include JSON and Avro."

// connectorDefs are the keys of Kafka 3.9's ConnectorConfig, in its order, with its texts.
func (w *Worker) connectorDefs() []configKey {
	keys := []configKey{
		def("name", "STRING", nil, true, "HIGH", "Globally unique name to use for this connector.", groupCommon, 1, "MEDIUM", "Connector name"),
		def("connector.class", "STRING", nil, true, "HIGH",
			"Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. "+
				"If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name, "+
				" or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter",
			groupCommon, 2, "LONG", "Connector class"),
		def("tasks.max", "INT", str("1"), false, "HIGH", "Maximum number of tasks to use for this connector.", groupCommon, 3, "SHORT", "Tasks max"),
		def("tasks.max.enforce", "BOOLEAN", str("true"), false, "LOW",
			"(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. "+
				"By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. "+
				"If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of "+
				"tasks that exceed the tasks.max property will be allowed to run. "+
				"This property is deprecated and will be removed in an upcoming major release.",
			groupCommon, 4, "SHORT", "Enforce tasks max"),
		def("key.converter", "CLASS", nil, false, "LOW", fmt.Sprintf(converterDoc, "keys"), groupCommon, 5, "SHORT", "Key converter class"),
		def("value.converter", "CLASS", nil, false, "LOW", fmt.Sprintf(converterDoc, "values"), groupCommon, 6, "SHORT", "Value converter class"),
		def("header.converter", "CLASS", nil, false, "LOW",
			"HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka."+
				" This controls the format of the header values in messages written to or read from Kafka, and since this is"+
				" independent of connectors it allows any connector to work with any serialization format."+
				" Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize"+
				" header values to strings and deserialize them by inferring the schemas.",
			groupCommon, 7, "SHORT", "Header converter class"),
		def("transforms", "LIST", str(""), false, "LOW", "Aliases for the transformations to be applied to records.", groupTransforms, 8, "LONG", "Transforms"),
		def("predicates", "LIST", str(""), false, "LOW", "Aliases for the predicates used by transformations.", groupPredicates, 9, "LONG", "Predicates"),
		def("config.action.reload", "STRING", str("restart"), false, "LOW",
			"The action that Connect should take on the connector when changes in external "+
				"configuration providers result in a change in the connector's configuration properties. "+
				"A value of 'none' indicates that Connect will do nothing. "+
				"A value of 'restart' indicates that Connect should restart/reload the connector with the "+
				"updated configuration properties."+
				"The restart may actually be scheduled in the future if the external configuration provider "+
				"indicates that a configuration value will expire in the future.",
			groupCommon, 10, "MEDIUM", "Reload Action"),
		def("errors.retry.timeout", "LONG", str("0"), false, "MEDIUM",
			"The maximum duration in milliseconds that a failed operation "+
				"will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.",
			groupErrors, 1, "MEDIUM", "Retry Timeout for Errors"),
		def("errors.retry.delay.max.ms", "LONG", str("60000"), false, "MEDIUM",
			"The maximum duration in milliseconds between consecutive retry attempts. "+
				"Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.",
			groupErrors, 2, "MEDIUM", "Maximum Delay Between Retries for Errors"),
		def("errors.tolerance", "STRING", str("none"), false, "MEDIUM",
			"Behavior for tolerating errors during connector operation. 'none' is the default value "+
				"and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.",
			groupErrors, 3, "SHORT", "Error Tolerance"),
		def("errors.log.enable", "BOOLEAN", str("false"), false, "MEDIUM",
			"If true, write each error and the details of the failed operation and problematic record "+
				"to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported.",
			groupErrors, 4, "SHORT", "Log Errors"),
		def("errors.log.include.messages", "BOOLEAN", str("false"), false, "MEDIUM",
			"Whether to include in the log the Connect record that resulted in a failure. "+
				"For sink records, the topic, partition, offset, and timestamp will be logged. "+
				"For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, "+
				"and source offset will be logged. "+
				"This is 'false' by default, which will prevent record keys, values, and headers from being written to log files.",
			groupErrors, 5, "SHORT", "Log Error Details"),
	}
	set := func(name string, f func(k *configKey)) {
		for i := range keys {
			if keys[i].Name == name {
				f(&keys[i])
			}
		}
	}
	set("name", func(k *configKey) { k.check = nonEmptyStringWithoutControlChars })
	set("tasks.max", func(k *configKey) { k.check = atLeast(1, false) })
	for _, c := range []string{"key.converter", "value.converter"} {
		set(c, func(k *configKey) {
			k.class = w.anyPluginClass
			k.check = w.pluginOfKind(wire.KindConverter, "Converter")
		})
	}
	// header.converter is kept as given: this worker has no header converter plugins and writes
	// header values as SimpleHeaderConverter does, so that class is accepted and any other refused,
	// rather than accepted and ignored.
	set("header.converter", func(k *configKey) { k.check = honouredHeaderConverter })
	set("transforms", func(k *configKey) { k.check = uniqueAliases })
	set("predicates", func(k *configKey) { k.check = uniqueAliases })
	set("config.action.reload", func(k *configKey) { k.check = oneOf("none", "restart") })
	set("errors.tolerance", func(k *configKey) { k.check = oneOf("none", "all") })
	return keys
}

// simpleHeaderConverter is the one header converter this worker honours, by its class name and
// the aliases Kafka accepts for it.
var simpleHeaderConverter = []string{"org.apache.kafka.connect.storage.SimpleHeaderConverter", "SimpleHeaderConverter", "SimpleHeader"}

// honouredHeaderConverter is header.converter's validator: the tasks write and read header values
// as SimpleHeaderConverter does, whatever the setting says, so another class would be ignored.
func honouredHeaderConverter(name string, v configdef.Value) []string {
	if v.Null || slices.Contains(simpleHeaderConverter, v.Str) {
		return nil
	}
	return []string{invalid(name, v.Java(), "Not a HeaderConverter this worker honours: header values are written and read as "+
		simpleHeaderConverter[0]+" does, the only header converter available")}
}

// sinkDefs are Kafka 3.9's SinkConnectorConfig additions.
func sinkDefs() []configKey {
	keys := []configKey{
		def("topics", "LIST", str(""), false, "HIGH", "List of topics to consume, separated by commas", groupCommon, 4, "LONG", "Topics"),
		def("topics.regex", "STRING", str(""), false, "HIGH",
			"Regular expression giving topics to consume. "+
				"Under the hood, the regex is compiled to a <code>java.util.regex.Pattern</code>. "+
				"Only one of topics or topics.regex should be specified.",
			groupCommon, 4, "LONG", "Topics regex"),
		def("errors.deadletterqueue.topic.name", "STRING", str(""), false, "MEDIUM",
			"The name of the topic to be used as the dead letter queue (DLQ) for messages that "+
				"result in an error when processed by this sink connector, or its transformations or converters. The topic name is blank by default, "+
				"which means that no messages are to be recorded in the DLQ.",
			groupErrors, 6, "MEDIUM", "Dead Letter Queue Topic Name"),
		def("errors.deadletterqueue.topic.replication.factor", "SHORT", str("3"), false, "MEDIUM",
			"Replication factor used to create the dead letter queue topic when it doesn't already exist.",
			groupErrors, 7, "MEDIUM", "Dead Letter Queue Topic Replication Factor"),
		def("errors.deadletterqueue.context.headers.enable", "BOOLEAN", str("false"), false, "MEDIUM",
			"If true, add headers containing error context to the messages "+
				"written to the dead letter queue. To avoid clashing with headers from the original record, all error context header "+
				"keys, all error context header keys will start with <code>__connect.errors.</code>",
			groupErrors, 8, "MEDIUM", "Enable Error Context Headers"),
	}
	keys[1].check = validRegex
	return keys
}

// sourceDefs are Kafka 3.9's SourceConnectorConfig additions.
func sourceDefs() []configKey {
	keys := []configKey{
		def("topic.creation.groups", "LIST", str(""), false, "LOW", "Groups of configurations for topics created by source connectors",
			groupTopicCreation, 1, "LONG", "Topic Creation Groups"),
		def("exactly.once.support", "STRING", str("requested"), false, "MEDIUM",
			"Permitted values are requested, required. "+
				"If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics "+
				"with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to "+
				"Connect that they support this; in that case, documentation for the connector should be consulted carefully before "+
				"creating it, and the value for this property should be set to \"requested\". "+
				"Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have "+
				"exactly-once support enabled for source connectors, requests to create or validate the connector will fail.",
			groupExactlyOnce, 2, "SHORT", "Exactly once support"),
		def("transaction.boundary", "STRING", str("poll"), false, "MEDIUM",
			"Permitted values are: poll, interval, connector. "+
				"If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from "+
				"this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that "+
				"not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with "+
				"this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.",
			groupExactlyOnce, 3, "SHORT", "Transaction Boundary"),
		def("transaction.boundary.interval.ms", "LONG", nil, false, "LOW",
			"If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. "+
				"If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different "+
				"transaction.boundary is specified.",
			groupExactlyOnce, 4, "SHORT", "Transaction boundary interval"),
		def("offsets.storage.topic", "STRING", nil, false, "LOW",
			"The name of a separate offsets topic to use for this connector. "+
				"If empty or not specified, the worker’s global offsets topic name will be used. "+
				"If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector "+
				"(which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer "+
				"has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect.",
			groupOffsetsTopic, 1, "LONG", "Offsets topic"),
	}
	keys[0].check = uniqueAliases
	keys[1].check = oneOfIgnoreCase("requested", "required")
	keys[2].check = oneOfIgnoreCase("poll", "interval", "connector")
	keys[3].check = atLeast(0, true)
	keys[4].check = nonEmptyString
	return keys
}

// frameworkDefs are the framework's keys of a connector of type typ (SourceConnectorConfig or
// SinkConnectorConfig), in Kafka's order.
func (w *Worker) frameworkDefs(typ connect.ConnectorType) []configKey {
	keys := w.connectorDefs()
	if typ == connect.TypeSink {
		return append(keys, sinkDefs()...)
	}
	return append(keys, sourceDefs()...)
}

// FrameworkConfig returns the framework's config definitions for a connector of type typ, as
// GET /connector-plugins/{plugin}/config lists them after the plugin's own.
func (w *Worker) FrameworkConfig(typ connect.ConnectorType) []connect.ConfigKeyInfo {
	keys := w.frameworkDefs(typ)
	out := make([]connect.ConfigKeyInfo, len(keys))
	for i, k := range keys {
		out[i] = k.ConfigKeyInfo
	}
	return out
}

// anyPluginClass resolves a class name or alias to the class of a loaded plugin of any kind,
// as Kafka's plugin class loader resolves aliases.
func (w *Worker) anyPluginClass(name string) (string, bool) {
	p, err := w.host.Resolve(name, "")
	if err != nil {
		return "", false
	}
	return p.Class, true
}

// pluginOfKind is the validator of a CLASS key that must name a plugin of one kind (Kafka's
// ConcreteSubClassValidator): "Not a Converter".
func (w *Worker) pluginOfKind(kind wire.Kind, javaType string) func(string, configdef.Value) []string {
	return func(name string, v configdef.Value) []string {
		if v.Null {
			return nil
		}
		if _, err := w.host.Resolve(v.Str, kind); err != nil {
			return []string{invalid(name, v.Java(), "Not a "+javaType)}
		}
		return nil
	}
}

// pluginDef turns a plugin descriptor's key into a definition.
func pluginDef(k wire.ConfigKey) configKey {
	return configKey{ConfigKeyInfo: connect.ConfigKeyInfo(k)}
}

// sortedForEmbed orders keys as Kafka's ConfigDef.sortedConfigs does before embedding them:
// keys without a group first, then by group (in the order groups were first defined), order in
// group, keys without a default before keys with one, importance and name.
func sortedForEmbed(keys []configKey) []configKey {
	groupOrd := map[string]int{}
	for _, k := range keys {
		if k.Group != nil {
			if _, ok := groupOrd[*k.Group]; !ok {
				groupOrd[*k.Group] = len(groupOrd)
			}
		}
	}
	importance := map[string]int{"HIGH": 0, "MEDIUM": 1, "LOW": 2}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b configKey) int {
		switch {
		case a.Group == nil && b.Group != nil:
			return -1
		case a.Group != nil && b.Group == nil:
			return 1
		case a.Group != nil && b.Group != nil:
			if c := cmp.Compare(groupOrd[*a.Group], groupOrd[*b.Group]); c != 0 {
				return c
			}
		}
		if c := cmp.Compare(a.Order, b.Order); c != 0 {
			return c
		}
		if a.Required != b.Required {
			if a.Required {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(importance[a.Importance], importance[b.Importance]); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// embed is Kafka's ConfigDef.embed: keys renamed with prefix, grouped under group (a key's own
// group becomes "<group>: <own group>"), numbered from order.
func embed(prefix, group string, order int, keys []configKey) []configKey {
	var out []configKey
	for _, k := range sortedForEmbed(keys) {
		e := k
		e.Name = prefix + k.Name
		g := group
		if k.Group != nil {
			g += ": " + *k.Group
		}
		e.Group = &g
		e.Order = order
		order++
		if k.DisplayName == "" {
			e.DisplayName = k.Name
		}
		e.Dependents = nil
		for _, d := range k.Dependents {
			e.Dependents = append(e.Dependents, prefix+d)
		}
		out = append(out, e)
	}
	return out
}
