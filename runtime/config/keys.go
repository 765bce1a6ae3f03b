package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Key is one worker setting. Each part of the worker declares its keys next to the code that
// parses them (plugins.go, kafka.go, topics.go, rest.go, cluster.go, reconcile.go,
// providers.go); Keys composes them, so the list of known settings cannot drift from what is read.
type Key struct {
	// Name is the key as written in a worker file. A name ending in "." declares every key under
	// it (producer., sasl.); a key declared by its full name wins over a prefix.
	Name string
	// Default is the value the parser uses when the key is absent or empty ("" for none).
	Default string
	// Doc says in a few words what the key does.
	Doc string
	// Ignored, when set, says why the key is accepted but has no effect: a Kafka Connect key kept
	// so that a Kafka worker file starts unchanged. Each one given is named in a start-up warning.
	Ignored string
}

// prefix reports whether the key declares every key under its name.
func (k Key) prefix() bool { return strings.HasSuffix(k.Name, ".") }

// areas are every part's keys. A new setting goes into its part's list, with its parse line in
// that part's parse function.
var areas = [][]Key{workerKeys, pluginKeys, kafkaKeys, topicKeys, restKeys, clusterKeys, reconcileKeys, providerKeys}

// byName indexes the keys declared by full name; prefixes holds the prefix keys, longest first.
var byName, prefixes = index()

func index() (map[string]Key, []Key) {
	names := map[string]Key{}
	var pre []Key
	for _, area := range areas {
		for _, k := range area {
			if _, dup := names[k.Name]; dup {
				panic("config: key declared twice: " + k.Name)
			}
			names[k.Name] = k
			if k.prefix() {
				pre = append(pre, k)
			}
		}
	}
	sort.Slice(pre, func(i, j int) bool { return len(pre[i].Name) > len(pre[j].Name) })
	return names, pre
}

// Keys returns every declared key, sorted by name.
func Keys() []Key {
	var out []Key
	for _, area := range areas {
		out = append(out, area...)
	}
	slices.SortFunc(out, func(a, b Key) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// lookup returns the key that declares name: itself, or the longest prefix it is under.
func lookup(name string) (Key, bool) {
	if k, ok := byName[name]; ok && !k.prefix() {
		return k, true
	}
	for _, k := range prefixes {
		if strings.HasPrefix(name, k.Name) && len(name) > len(k.Name) {
			return k, true
		}
	}
	return Key{}, false
}

// declared returns the default of a key declared by full name; asking for an undeclared key is a
// programming error, caught by any test that parses a config.
func declared(name string) string {
	k, ok := byName[name]
	if !ok || k.prefix() {
		panic("config: undeclared key " + name)
	}
	return k.Default
}

// Warning is a setting that is given but does nothing, for the start-up log.
type Warning struct {
	Key string
	Msg string
}

// UnknownMsg is Kafka's warning for a key no part of the worker reads.
const UnknownMsg = "The configuration was supplied but isn't a known config"

// warnings lists, sorted by key, the settings that are unknown and those that are accepted but
// ignored.
func warnings(props map[string]string) []Warning {
	var out []Warning
	for _, name := range sortedKeys(props) {
		k, ok := lookup(name)
		switch {
		case !ok:
			out = append(out, Warning{Key: name, Msg: UnknownMsg})
		case k.Ignored != "":
			out = append(out, Warning{Key: name, Msg: fmt.Sprintf("%s is accepted for compatibility but has no effect: %s", name, k.Ignored)})
		}
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
