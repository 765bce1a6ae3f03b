package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// TopicSpec describes one internal topic: how to create it if it is missing
// and what an existing one must look like.
type TopicSpec struct {
	// Name is the topic name.
	Name string

	// Partitions is the partition count for a new topic. Zero or less
	// means the broker default.
	Partitions int32

	// ReplicationFactor is the replication factor for a new topic; -1
	// (or 0) means the broker default.
	ReplicationFactor int16

	// Configs are extra topic configs for a new topic, from the worker's
	// config.storage.*, offset.storage.* or status.storage.* settings.
	// cleanup.policy is always compact, whatever this says.
	Configs map[string]string

	// SinglePartition marks the config topic: Kafka Connect refuses to
	// start if it has more than one partition, because the config log's
	// meaning depends on the total order of its records.
	SinglePartition bool

	// Property is the worker property that names this topic, such as
	// "config.storage.topic". It is only used to make errors actionable.
	Property string
}

// InternalTopics holds the specs of a worker's three internal topics.
type InternalTopics struct {
	Config  TopicSpec
	Offsets TopicSpec
	Status  TopicSpec
}

// InternalTopicsFrom returns the specs of a distributed worker's internal topics, as its
// settings give them (Kafka Connect's defaults and rules are applied there).
func InternalTopicsFrom(t config.InternalTopics) InternalTopics {
	spec := func(c config.Topic) TopicSpec {
		return TopicSpec{Name: c.Name, Partitions: c.Partitions, ReplicationFactor: c.ReplicationFactor,
			Configs: c.Configs, Property: c.Key}
	}
	out := InternalTopics{Config: spec(t.Config), Offsets: spec(t.Offsets), Status: spec(t.Status)}
	out.Config.SinglePartition = true
	return out
}

// describe names the topic, and the property that chose it, for errors.
func (s TopicSpec) describe() string {
	if s.Property != "" {
		return fmt.Sprintf("internal topic %q (%s)", s.Name, s.Property)
	}
	return fmt.Sprintf("internal topic %q", s.Name)
}

// EnsureTopics creates each missing topic with cleanup.policy=compact, and
// checks that each existing one is usable: its cleanup.policy must be
// exactly compact (Kafka Connect's TopicAdmin refuses "compact,delete" too,
// since deletion would lose configs and offsets), and a SinglePartition
// topic must have one partition. All problems are reported together.
//
// A topic that another worker creates between our check and our create is
// not an error; it is checked like any existing topic.
func EnsureTopics(ctx context.Context, adm *kadm.Client, specs ...TopicSpec) error {
	if len(specs) == 0 {
		return nil
	}
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.Name)
	}
	details, err := listTopics(ctx, adm, names)
	if err != nil {
		return err
	}

	var (
		errs    []error
		verify  []TopicSpec
		created []string
	)
	for _, s := range specs {
		d, ok := details[s.Name]
		switch {
		case ok && d.Err == nil:
			verify = append(verify, s)
		case !ok || errors.Is(d.Err, kerr.UnknownTopicOrPartition):
			switch ok, err := createTopic(ctx, adm, s); {
			case err != nil:
				errs = append(errs, err)
			case ok:
				created = append(created, s.Name)
			default: // another worker created it first
				verify = append(verify, s)
			}
		default:
			errs = append(errs, fmt.Errorf("looking up %s: %w", s.describe(), d.Err))
		}
	}
	if len(verify) > 0 {
		errs = append(errs, verifyTopics(ctx, adm, verify))
	}
	if len(created) > 0 {
		// The client's metadata cache still says the new topics are
		// missing; refresh it so that requests that use it (listing
		// offsets) find them. Best effort: brokers may need a moment
		// to learn about new topics, and users of the cache retry.
		_, _ = listTopics(ctx, adm, created)
	}
	return errors.Join(errs...)
}

// listTopics asks the brokers for topic metadata.
//
// kadm normally answers from the client's metadata cache, which for a few
// seconds can still say a topic that was just created is missing (or a
// topic that was just deleted exists). A request for authorized operations
// always goes to a broker, so we ask for those.
func listTopics(ctx context.Context, adm *kadm.Client, names []string) (kadm.TopicDetails, error) {
	details, err := adm.ListTopics(kadm.WithAuthorizedOps(ctx), names...)
	if err != nil {
		return nil, fmt.Errorf("listing internal topics %s: %w", strings.Join(names, ", "), err)
	}
	return details, nil
}

// createTopic creates s, reporting false if it exists already (another
// worker won a race to create it).
func createTopic(ctx context.Context, adm *kadm.Client, s TopicSpec) (bool, error) {
	configs := make(map[string]*string, len(s.Configs)+1)
	for k, v := range s.Configs {
		configs[k] = kadm.StringPtr(v)
	}
	configs["cleanup.policy"] = kadm.StringPtr("compact")
	parts, rf := s.Partitions, s.ReplicationFactor
	if s.SinglePartition {
		parts = 1
	}
	if parts <= 0 {
		parts = -1
	}
	if rf <= 0 {
		rf = -1
	}
	resp, err := adm.CreateTopic(ctx, parts, rf, configs, s.Name)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, kerr.TopicAlreadyExists):
		return false, nil
	}
	if resp.ErrMessage != "" {
		err = fmt.Errorf("%w (%s)", err, resp.ErrMessage)
	}
	var hint string
	if errors.Is(err, kerr.InvalidReplicationFactor) && s.Property != "" {
		hint = fmt.Sprintf("; the cluster has fewer brokers than that: lower %s.replication.factor, or set it to -1 for the broker default",
			strings.TrimSuffix(s.Property, ".topic"))
	}
	return false, fmt.Errorf("creating %s with %d partitions and replication factor %d: %w%s",
		s.describe(), parts, rf, err, hint)
}

// verifyTopics checks the cleanup policy and partition count of topics that
// existed before we looked.
// topicWarning receives the problems with existing internal topics that do not stop a worker.
// The default logs them; the worker's logger is passed through the context by withWarnings.
func topicWarning(ctx context.Context, msg string) {
	if log, ok := ctx.Value(warnLoggerKey{}).(*slog.Logger); ok {
		log.Warn(msg)
		return
	}
	slog.Default().Warn(msg)
}

type warnLoggerKey struct{}

// withWarnings makes topicWarning log to log for calls with the returned context.
func withWarnings(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, warnLoggerKey{}, log)
}

func verifyTopics(ctx context.Context, adm *kadm.Client, specs []TopicSpec) error {
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.Name)
	}
	details, err := listTopics(ctx, adm, names)
	if err != nil {
		return err
	}
	configs, err := adm.DescribeTopicConfigs(ctx, names...)
	if err != nil {
		return fmt.Errorf("describing the configs of internal topics %s: %w", strings.Join(names, ", "), err)
	}
	var errs []error
	for _, s := range specs {
		if d, ok := details[s.Name]; ok && d.Err == nil && !s.SinglePartition && s.Partitions > 0 && len(d.Partitions) < int(s.Partitions) {
			// Kafka Connect works with fewer partitions than configured (only its parallelism suffers),
			// so this is a warning, but one that names the topic: it usually means the topic was made
			// by hand, or by another cluster.
			topicWarning(ctx, fmt.Sprintf("%s has %d partitions, fewer than the %d configured; it works, with less parallelism "+
				"(recreate the topic to change that)", s.describe(), len(d.Partitions), s.Partitions))
		}
		if d, ok := details[s.Name]; ok && d.Err == nil && s.SinglePartition && len(d.Partitions) > 1 {
			fix := "delete it and let the worker recreate it with 1 partition"
			if s.Property != "" {
				fix += ", or set " + s.Property + " to another topic"
			}
			errs = append(errs, fmt.Errorf("%s has %d partitions; Kafka Connect requires the config topic to have exactly 1 partition (%s)",
				s.describe(), len(d.Partitions), fix))
		}
		rc, err := configs.On(s.Name, nil)
		if err == nil {
			err = rc.Err
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("describing the configs of %s: %w", s.describe(), err))
			continue
		}
		policy := "delete" // Kafka's default when the topic does not set one.
		for _, c := range rc.Configs {
			if c.Key == "cleanup.policy" && c.Value != nil {
				policy = *c.Value
			}
		}
		if !onlyCompact(policy) {
			errs = append(errs, fmt.Errorf("%s has cleanup.policy=%s; Kafka Connect requires cleanup.policy=compact "+
				"(set it with kafka-configs or delete the topic)", s.describe(), policy))
		}
	}
	return errors.Join(errs...)
}

// onlyCompact reports whether a cleanup.policy list is exactly {compact}.
func onlyCompact(policy string) bool {
	set := map[string]bool{}
	for p := range strings.SplitSeq(policy, ",") {
		if p = strings.TrimSpace(strings.ToLower(p)); p != "" {
			set[p] = true
		}
	}
	return slices.Equal(slices.Sorted(maps.Keys(set)), []string{"compact"})
}
