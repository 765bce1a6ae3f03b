package cluster

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// SettingKeys are the worker settings that must be equal on all workers of one cluster: a worker
// that reads another config topic, or another converter, would run the group's connectors
// against other data. They travel in the metadata extension, so they must never hold secrets;
// that is why converter sub-settings other than schemas.enable are left out (they may carry
// schema-registry credentials).
//
// Settings that may differ during a rolling change (connect.protocol,
// exactly.once.source.support) are left out too.
var SettingKeys = []string{
	"config.storage.topic",
	"offset.storage.topic",
	"status.storage.topic",
	"config.storage.replication.factor",
	"offset.storage.replication.factor",
	"status.storage.replication.factor",
	"offset.storage.partitions",
	"status.storage.partitions",
	"key.converter",
	"value.converter",
	"header.converter",
	"key.converter.schemas.enable",
	"value.converter.schemas.enable",
}

// Settings picks the SettingKeys that props sets, for Config.Settings. Only keys that both the
// leader and a worker report are compared, so a worker that leaves a setting to its default is
// not refused for it.
func Settings(props map[string]string) map[string]string {
	out := make(map[string]string)
	for _, k := range SettingKeys {
		if v, ok := props[k]; ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

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
