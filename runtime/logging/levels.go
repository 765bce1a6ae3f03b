package logging

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Levels holds the levels of a process's loggers the way log4j's hierarchy does for Kafka
// Connect's /admin/loggers API: a root level, loggers with a level of their own, and every other
// logger inheriting the level of its nearest ancestor by dotted name ("a.b.c" from "a.b", then
// "a", then the root).
//
// A logger exists once it is registered, has logged, or has been given a level; only existing
// loggers can be looked up, as in Kafka, where a logger exists once a class asked for it.
//
// Levels is safe for concurrent use. Reads on the logging path take no lock: they use an
// immutable snapshot replaced on every change.
type Levels struct {
	mu       sync.Mutex // serializes changes
	root     string
	explicit map[string]string // logger -> level, for loggers with a level of their own
	modified map[string]int64  // logger (or "root") -> when its level was last set, ms since the epoch
	known    sync.Map          // logger name -> struct{}: the loggers that exist
	snap     atomic.Pointer[snapshot]
}

// snapshot is the state the logging path reads.
type snapshot struct {
	root     slog.Level
	explicit map[string]slog.Level
	min      slog.Level // the most verbose level any logger has
	cache    sync.Map   // logger name -> slog.Level, its effective level
}

// NewLevels returns loggers at the root level root, one of connect.LogLevels.
func NewLevels(root string) *Levels {
	if l, ok := connect.ParseLogLevel(root); ok {
		root = l
	} else {
		root = "INFO"
	}
	l := &Levels{root: root, explicit: map[string]string{}, modified: map[string]int64{}}
	l.publish()
	return l
}

// publish builds a new snapshot; l.mu is held (or l is not shared yet).
func (l *Levels) publish() {
	s := &snapshot{root: connect.SlogLevel(l.root), explicit: make(map[string]slog.Level, len(l.explicit))}
	s.min = s.root
	for name, level := range l.explicit {
		s.explicit[name] = connect.SlogLevel(level)
		s.min = min(s.min, s.explicit[name])
	}
	l.snap.Store(s)
}

func (s *snapshot) effective(name string) slog.Level {
	if v, ok := s.cache.Load(name); ok {
		return v.(slog.Level)
	}
	level := s.root
	for n := name; n != ""; {
		if lv, ok := s.explicit[n]; ok {
			level = lv
			break
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	s.cache.Store(name, level)
	return level
}

// Enabled reports whether a record at level passes logger name's effective level.
func (l *Levels) Enabled(name string, level slog.Level) bool {
	s := l.snap.Load()
	if len(s.explicit) == 0 {
		return level >= s.root
	}
	return level >= s.effective(name)
}

// minLevel is the most verbose level of any logger: a record below it passes no logger.
func (l *Levels) minLevel() slog.Level { return l.snap.Load().min }

// Register makes loggers exist without their having logged.
func (l *Levels) Register(names ...string) {
	for _, n := range names {
		l.see(n)
	}
}

func (l *Levels) see(name string) {
	if name == "" {
		return
	}
	if _, ok := l.known.Load(name); !ok {
		l.known.Store(name, struct{}{})
	}
}

func (l *Levels) exists(name string) bool {
	_, ok := l.known.Load(name)
	return ok
}

// effectiveName is a logger's level name: its own, or its nearest ancestor's, or the root's.
// l.mu is held.
func (l *Levels) effectiveName(name string) string {
	for n := name; n != ""; {
		if lv, ok := l.explicit[n]; ok {
			return lv
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	return l.root
}

func (l *Levels) level(name string) connect.LoggerLevel {
	out := connect.LoggerLevel{Level: l.effectiveName(name)}
	if name == connect.RootLogger {
		out.Level = l.root
	}
	if ms, ok := l.modified[name]; ok {
		out.LastModified = &ms
	}
	return out
}

// Level returns a logger's level (GET /admin/loggers/{name}): its own if it has one, else the one
// it inherits, with when it was last set. "root", in any case, is the root logger. ok is false
// for a logger that does not exist.
func (l *Levels) Level(name string) (level connect.LoggerLevel, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if strings.EqualFold(name, connect.RootLogger) {
		return l.level(connect.RootLogger), true
	}
	if _, set := l.explicit[name]; !set && !l.exists(name) {
		if ours := ourLoggers(name); len(ours) > 0 {
			// A Kafka Connect logger that was never set here answers with what it stands for.
			return connect.LoggerLevel{Level: l.effectiveName(ours[0])}, true
		}
		return connect.LoggerLevel{}, false
	}
	return l.level(name), true
}

// All returns the loggers with a level of their own, and the root logger (GET /admin/loggers).
func (l *Levels) All() map[string]connect.LoggerLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]connect.LoggerLevel, len(l.explicit)+1)
	for name := range l.explicit {
		out[name] = l.level(name)
	}
	out[connect.RootLogger] = l.level(connect.RootLogger)
	return out
}

// Set gives namespace, and every existing logger whose name starts with it, the level level (one
// of connect.LogLevels), as Kafka's Loggers.setLevel: "root" (any case) sets the root and every
// logger. A Kafka Connect name (org.apache.kafka.connect...) also sets the loggers of the packages
// that do its work here. A logger already at that level (its own or inherited) keeps its state and its last
// modification time. It returns the names of the loggers concerned, sorted.
func (l *Levels) Set(namespace, level string, now time.Time) []string {
	level, ok := connect.ParseLogLevel(level)
	if !ok {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ms := now.UnixMilli()
	isRoot := strings.EqualFold(namespace, connect.RootLogger)
	// A Kafka Connect name also sets the loggers it stands for here (see kafkaLoggers).
	prefixes := append([]string{namespace}, ourLoggers(namespace)...)
	under := func(n string) bool {
		return isRoot || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(n, p) })
	}
	var names []string
	l.known.Range(func(k, _ any) bool {
		if n := k.(string); under(n) {
			names = append(names, n)
		}
		return true
	})
	for n := range l.explicit {
		if under(n) && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, p := range prefixes {
		if !isRoot && !slices.Contains(names, p) {
			names = append(names, p) // Kafka creates the namespace's logger
			l.see(p)
		}
	}
	// Every logger is compared with its level before the change, so the result does not depend on
	// the order loggers are visited in.
	current := make(map[string]string, len(names)+1)
	for _, n := range names {
		current[n] = l.effectiveName(n)
	}
	for _, n := range names {
		if current[n] != level {
			l.explicit[n] = level
			l.modified[n] = ms
		}
	}
	if isRoot {
		if l.root != level {
			l.root = level
			l.modified[connect.RootLogger] = ms
		}
		names = append(names, connect.RootLogger)
	}
	l.publish()
	slices.Sort(names)
	return names
}
