package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// parser reads settings with their declared defaults and collects every bad one, so that one run
// reports them all.
type parser struct {
	source string
	props  map[string]string
	errs   []string
}

// fail records a bad value.
func (p *parser) fail(key, value, why string) {
	p.errs = append(p.errs, fmt.Sprintf("%s: invalid value %q for %s: %s", p.source, value, key, why))
}

// failf records a problem that is not one key's value (two keys that exclude each other, say).
func (p *parser) failf(format string, args ...any) {
	p.errs = append(p.errs, p.source+": "+fmt.Sprintf(format, args...))
}

func (p *parser) err() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("invalid worker config: %s", p.errs[0])
	}
	return fmt.Errorf("invalid worker config:\n  %s", strings.Join(p.errs, "\n  "))
}

// raw returns the value as given, and whether it is given.
func (p *parser) raw(key string) (string, bool) {
	v, ok := p.props[key]
	return v, ok
}

// str returns the trimmed value, or the key's default when it is absent.
func (p *parser) str(key string) string {
	def := declared(key)
	if v, ok := p.props[key]; ok {
		return strings.TrimSpace(v)
	}
	return def
}

func (p *parser) required(key string) string {
	v := p.str(key)
	if v == "" {
		p.errs = append(p.errs, fmt.Sprintf("%s: missing required setting %s", p.source, key))
	}
	return v
}

func (p *parser) list(key string) []string { return SplitList(p.str(key)) }

// intRange returns the value, or the default when it is absent or empty.
func (p *parser) intRange(key string, lo, hi int) int {
	def, err := strconv.Atoi(declared(key))
	if err != nil {
		panic("config: default of " + key + " is not an integer")
	}
	v, ok := p.props[key]
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	switch {
	case err != nil:
		p.fail(key, v, "not an integer")
	case n < lo || n > hi:
		p.fail(key, v, fmt.Sprintf("must be between %d and %d", lo, hi))
	default:
		return n
	}
	return def
}

func (p *parser) millis(key string) time.Duration {
	return time.Duration(p.intRange(key, 0, 1<<31-1)) * time.Millisecond
}

// bool reads true or false in any case; absent or empty is the default.
func (p *parser) bool(key string) bool {
	switch v := strings.ToLower(p.str(key)); v {
	case "true", "false":
		return v == "true"
	case "":
		return declared(key) == "true"
	}
	p.fail(key, p.props[key], "must be true or false")
	return declared(key) == "true"
}

// under returns the keys under prefix, with the prefix removed, leaving out the keys some part
// declares by full name (offset.storage.topic is not a topic config, admin.listeners not an
// admin client setting).
func (p *parser) under(prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range p.props {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || rest == "" {
			continue
		}
		if d, declared := byName[k]; declared && !d.prefix() {
			continue
		}
		out[rest] = v
	}
	return out
}
