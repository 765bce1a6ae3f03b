package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// settingDiff is one setting whose value differs between two workers.
type settingDiff struct{ key, mine, theirs string }

// diffSettings returns the settings both maps hold with different values, sorted by key.
func diffSettings(mine, theirs map[string]string) []settingDiff {
	var out []settingDiff
	for _, k := range slices.Sorted(maps.Keys(mine)) {
		if t, ok := theirs[k]; ok && strings.TrimSpace(t) != strings.TrimSpace(mine[k]) {
			out = append(out, settingDiff{key: k, mine: mine[k], theirs: t})
		}
	}
	return out
}

// describeDiffs renders diffs from the refused worker's point of view; where says whose value
// "theirs" is, e.g. "in group connect-cluster (leader http://a:8083)".
func describeDiffs(diffs []settingDiff, where string) string {
	parts := make([]string, len(diffs))
	for i, d := range diffs {
		parts[i] = fmt.Sprintf("%s is %s on this worker but %s %s", d.key, d.mine, d.theirs, where)
	}
	return strings.Join(parts, "; ")
}
