package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SettingDiff is one shared setting whose value differs between two workers.
type SettingDiff struct{ Key, Mine, Theirs string }

// DiffSettings returns the settings both maps hold with different values, sorted by key: what a
// wasmconnect leader refuses a worker for (and what wasmconnect doctor reports before it does).
func DiffSettings(mine, theirs map[string]string) []SettingDiff {
	var out []SettingDiff
	for _, k := range slices.Sorted(maps.Keys(mine)) {
		if t, ok := theirs[k]; ok && strings.TrimSpace(t) != strings.TrimSpace(mine[k]) {
			out = append(out, SettingDiff{Key: k, Mine: mine[k], Theirs: t})
		}
	}
	return out
}

// describeDiffs renders diffs from the refused worker's point of view; where says whose value
// "theirs" is, e.g. "in group connect-cluster (leader http://a:8083)".
func describeDiffs(diffs []SettingDiff, where string) string {
	parts := make([]string, len(diffs))
	for i, d := range diffs {
		parts[i] = fmt.Sprintf("%s is %s on this worker but %s %s", d.Key, d.Mine, d.Theirs, where)
	}
	return strings.Join(parts, "; ")
}
