package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// setAsideOrphanPartitions moves the partition directories of a data dir that belong to no topic
// it lists into orphaned/, before kfake loads it.
//
// A broker killed before this package created topics through Cluster.CreateTopic (see
// autoCreateTopics) left such directories: the records of a topic auto-created in that run, but not
// the topic. kfake opens a partition's segment files for appending, so a topic of the same name
// created again would write its batches after the old ones while indexing them from the start of
// the file, and its consumers would read the old bytes as corrupt batches. Moved aside, the old
// records are kept for an operator to look at and the new topic starts clean.
//
// It relies on kfake's layout of a data dir: topics.json and partitions/<escaped topic>-<n>.
func setAsideOrphanPartitions(dataDir string, log *slog.Logger) error {
	raw, err := os.ReadFile(filepath.Join(dataDir, "topics.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil // a new data dir
	}
	if err != nil {
		return err
	}
	var listed struct {
		Topics []struct {
			Name       string `json:"name"`
			Partitions int    `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(raw, &listed); err != nil {
		return fmt.Errorf("reading %s: %w", filepath.Join(dataDir, "topics.json"), err)
	}
	partitions := make(map[string]int, len(listed.Topics))
	for _, t := range listed.Topics {
		partitions[t.Name] = t.Partitions
	}

	dir := filepath.Join(dataDir, "partitions")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	for _, e := range entries {
		topic, p, ok := parsePartitionDir(e.Name())
		if !e.IsDir() || !ok {
			continue
		}
		if n, listed := partitions[topic]; listed && p < n {
			continue
		}
		to := filepath.Join(dataDir, "orphaned", e.Name()+"-"+stamp)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(dir, e.Name()), to); err != nil {
			return fmt.Errorf("moving aside the partition directory of unknown topic %q: %w", topic, err)
		}
		log.Warn("embedded broker: the data dir holds records of a partition of no known topic, "+
			"left by a broker killed before it saved a topic it created on first use; moved aside, "+
			"so the topic, if created again, starts empty instead of mixing with them",
			"topic", topic, "partition", p, "moved_to", to)
	}
	return nil
}

// parsePartitionDir splits kfake's "<escaped topic>-<partition>" directory name.
func parsePartitionDir(name string) (topic string, partition int, ok bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 {
		return "", 0, false
	}
	p, err := strconv.Atoi(name[i+1:])
	if err != nil || p < 0 {
		return "", 0, false
	}
	topic, err = url.PathUnescape(name[:i])
	if err != nil {
		return "", 0, false
	}
	return topic, p, true
}
