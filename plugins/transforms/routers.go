package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

func registerRouters() {
	sdk.RegisterTransformation(info("RegexRouter", "",
		sdk.ConfigDef{Name: "regex", Required: true, Importance: sdk.High, Validator: validRegex, Documentation: "Regular expression to use for matching."},
		sdk.ConfigDef{Name: "replacement", Required: true, Importance: sdk.High, Documentation: "Replacement string."}),
		func() sdk.Transformation { return &regexRouter{} })
	sdk.RegisterTransformation(info("TimestampRouter", "",
		sdk.ConfigDef{Name: "topic.format", Default: new("${topic}-${timestamp}"), Importance: sdk.High,
			Documentation: "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."},
		sdk.ConfigDef{Name: "timestamp.format", Default: new("yyyyMMdd"), Importance: sdk.High,
			Documentation: "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."}),
		func() sdk.Transformation { return &timestampRouter{} })
	sdk.RegisterTransformation(info("Filter", ""), func() sdk.Transformation { return filter{} })
}

// compileJava compiles a Java regular expression that must match a whole string (Matcher.matches).
func compileJava(re string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + re + `)$`)
}

func validRegex(v string) error {
	if _, err := compileJava(v); err != nil {
		return fmt.Errorf("Invalid regex: %v", err)
	}
	return nil
}

// ---- RegexRouter ----------------------------------------------------------------------------

type regexRouter struct {
	re          *regexp.Regexp
	replacement string // as a Go template for Regexp.Expand
	routes      topicMemo[string]
}

// topicMemo remembers a result per topic: a batch has few topics, and a regular expression costs
// microseconds per record in a wasm guest.
type topicMemo[T any] struct {
	m map[string]T
}

func (c *topicMemo[T]) get(topic string, compute func(string) T) T {
	if v, ok := c.m[topic]; ok {
		return v
	}
	v := compute(topic)
	if c.m == nil || len(c.m) >= 1024 {
		c.m = map[string]T{}
	}
	c.m[topic] = v
	return v
}

func (t *regexRouter) Configure(cfg sdk.Config) error {
	re, err := compileJava(cfg["regex"])
	if err != nil {
		return sdk.InvalidConfig("regex", cfg["regex"], "Invalid regex: "+err.Error())
	}
	t.re = re
	t.replacement, err = goTemplate(cfg["replacement"], re)
	if err != nil {
		return sdk.InvalidConfig("replacement", cfg["replacement"], err.Error())
	}
	return nil
}

// goTemplate turns a java.util.regex replacement ($1, ${name}, \$) into a Regexp.Expand template.
func goTemplate(rep string, re *regexp.Regexp) (string, error) {
	groups := re.NumSubexp() - 0
	var b strings.Builder
	for i := 0; i < len(rep); i++ {
		c := rep[i]
		switch c {
		case '\\':
			i++
			if i == len(rep) {
				return "", fmt.Errorf("character to be escaped is missing")
			}
			if rep[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(rep[i])
			}
		case '$':
			i++
			if i == len(rep) {
				return "", fmt.Errorf("Illegal group reference: group index is missing")
			}
			if rep[i] == '{' {
				end := strings.IndexByte(rep[i:], '}')
				if end < 0 {
					return "", fmt.Errorf("named capturing group is missing trailing '}'")
				}
				name := rep[i+1 : i+end]
				if re.SubexpIndex(name) < 0 {
					return "", fmt.Errorf("No group with name {%s}", name)
				}
				b.WriteString("${" + name + "}")
				i += end
				continue
			}
			if rep[i] < '0' || rep[i] > '9' {
				return "", fmt.Errorf("Illegal group reference")
			}
			// Java reads digits while the number is still a group.
			n := int(rep[i] - '0')
			for i+1 < len(rep) && rep[i+1] >= '0' && rep[i+1] <= '9' {
				m := n*10 + int(rep[i+1]-'0')
				if m > groups {
					break
				}
				n = m
				i++
			}
			if n > groups {
				return "", fmt.Errorf("No group %d", n)
			}
			b.WriteString("${" + strconv.Itoa(n) + "}")
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

func (t *regexRouter) Apply(r *sdk.Record) (*sdk.Record, error) {
	r.Topic = t.routes.get(r.Topic, t.route) // the same string when unchanged: the record stays unchanged
	return r, nil
}

func (t *regexRouter) route(topic string) string {
	m := t.re.FindStringSubmatchIndex(topic)
	if m == nil {
		return topic
	}
	return string(t.re.ExpandString(nil, t.replacement, topic, m))
}

// ---- TimestampRouter ------------------------------------------------------------------------

type timestampRouter struct {
	format string
	layout *javaLayout
}

func (t *timestampRouter) Configure(cfg sdk.Config) error {
	t.format = cfg.String("topic.format", "${topic}-${timestamp}")
	f := cfg.String("timestamp.format", "yyyyMMdd")
	l, err := parseJavaLayout(f)
	if err != nil {
		return sdk.InvalidConfig("timestamp.format", f, err.Error())
	}
	t.layout = l
	return nil
}

func (t *timestampRouter) Apply(r *sdk.Record) (*sdk.Record, error) {
	if r.Timestamp < 0 {
		return nil, sdk.DataError("Timestamp missing on record: topic=%s partition=%d", r.Topic, r.Partition)
	}
	ts := t.layout.format(time.UnixMilli(r.Timestamp))
	r.Topic = strings.ReplaceAll(strings.ReplaceAll(t.format, "${topic}", r.Topic), "${timestamp}", ts)
	return r, nil
}

// ---- Filter ---------------------------------------------------------------------------------

// filter drops every record it is applied to; used with a predicate.
type filter struct{}

func (filter) Configure(sdk.Config) error               { return nil }
func (filter) Apply(r *sdk.Record) (*sdk.Record, error) { return nil, nil }
