package herder

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/logging"
	"github.com/wasmconnect/wasmconnect/runtime/store"
)

// The admin/loggers requests (KIP-495, KIP-976). Levels live in the logging.Levels of the
// herder's logger (node wraps the process logger with logging.Wrap).

// unwiredLevels stands in when the herder's logger was not made by logging.Wrap: levels can then
// be read and set, but they filter nothing.
var unwiredLevels = sync.OnceValue(func() *logging.Levels { return logging.NewLevels("INFO") })

func (h *Herder) levels() *logging.Levels {
	if l := logging.LevelsOf(h.cfg.Logger); l != nil {
		return l
	}
	return unwiredLevels()
}

// Loggers returns the loggers that have a level of their own, and the root logger.
func (h *Herder) Loggers(context.Context) (map[string]connect.LoggerLevel, error) {
	return h.levels().All(), nil
}

// Logger returns one logger's level, its own or inherited; found is false for a logger that does
// not exist.
func (h *Herder) Logger(_ context.Context, name string) (connect.LoggerLevel, bool, error) {
	level, found := h.levels().Level(name)
	return level, found, nil
}

// SetLogLevel sets the level of namespace and of every logger below it: on this worker for
// connect.ScopeWorker, returning the loggers concerned; for connect.ScopeCluster by writing
// logger-cluster-<namespace> to the config topic, which every worker (this one included) applies
// when it reads it. As in Kafka, any worker writes the record itself.
func (h *Herder) SetLogLevel(ctx context.Context, namespace, level string, scope connect.LogScope) ([]string, error) {
	if scope == connect.ScopeCluster {
		h.log.Info("setting a cluster-wide logger level", "namespace", namespace, "level", level)
		return nil, h.cfg.Configs.PutLoggerLevel(ctx, namespace, level)
	}
	h.log.Info("setting the level of a logger namespace and its children", "namespace", namespace, "level", level)
	return h.levels().Set(namespace, level, time.Now()), nil
}

// followClusterLoggerLevels makes this worker apply cluster-scope logger levels (KIP-976): now
// those of the config topic read so far (a worker that starts applies the levels set before it
// started), and from then on each one the herder's loop reads, through its change hooks. Call it
// once, after the config store has started and before Run.
func (h *Herder) followClusterLoggerLevels() {
	h.applyClusterLoggerLevels(h.cfg.Configs.Snapshot())
	h.changeHooks = append(h.changeHooks, h.applyLoggerChange)
}

// applyClusterLoggerLevels applies the cluster-scope levels of a config snapshot. The snapshot
// keeps one level per namespace but not the order they were written in, so the root goes first
// and a namespace before the namespaces below it: the most specific setting wins.
func (h *Herder) applyClusterLoggerLevels(snap store.ConfigSnapshot) {
	names := slices.SortedFunc(maps.Keys(snap.LoggerLevels), func(a, b string) int {
		ra, rb := strings.EqualFold(a, connect.RootLogger), strings.EqualFold(b, connect.RootLogger)
		switch {
		case ra && !rb:
			return -1
		case rb && !ra:
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, ns := range names {
		h.applyClusterLoggerLevel(ns, snap.LoggerLevels[ns])
	}
}

// applyLoggerChange is a change hook: it applies a cluster-scope level when the loop reads one and
// ignores every other change.
func (h *Herder) applyLoggerChange(c store.Change) {
	if c.Kind == store.LoggerLevelChanged {
		h.applyClusterLoggerLevel(c.Namespace, c.Level)
	}
}

func (h *Herder) applyClusterLoggerLevel(namespace, level string) {
	l, ok := connect.ParseLogLevel(level)
	if !ok {
		h.log.Warn("ignoring a cluster-wide logger level that is not a log level", "namespace", namespace, "level", level)
		return
	}
	changed := h.levels().Set(namespace, l, time.Now())
	h.log.Info("applied a cluster-wide logger level", "namespace", namespace, "level", l, "loggers", len(changed))
}
