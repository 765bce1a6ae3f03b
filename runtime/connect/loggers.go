package connect

import (
	"log/slog"
	"strings"
)

// LoggerLevel is one logger of GET /admin/loggers and the body of GET /admin/loggers/{name} (KIP-495,
// with last_modified from KIP-976).
type LoggerLevel struct {
	Level string `json:"level"`
	// LastModified is when the level was last set through the REST API, in milliseconds since the
	// epoch; nil (JSON null) when it never was.
	LastModified *int64 `json:"last_modified"`
}

// RootLogger is the name of the root logger in the REST API, as Kafka keeps it from log4j 1.
const RootLogger = "root"

// LogScope is the ?scope= of PUT /admin/loggers/{name}.
type LogScope string

const (
	ScopeWorker  LogScope = "worker"  // this worker only; answered 200 with the loggers changed
	ScopeCluster LogScope = "cluster" // every worker, through the config topic; answered 204
)

// LogLevels are the levels PUT /admin/loggers/{name} accepts (log4j's), from least to most verbose.
var LogLevels = []string{"OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL"}

// ParseLogLevel returns the level named s in upper case, in any case, or ok=false if s is not one of
// LogLevels.
func ParseLogLevel(s string) (level string, ok bool) {
	u := strings.ToUpper(strings.TrimSpace(s))
	for _, l := range LogLevels {
		if u == l {
			return l, true
		}
	}
	return "", false
}

// SlogLevel maps a log4j level (one of LogLevels) to the slog level that lets the same records
// through: TRACE is below DEBUG, FATAL above ERROR, OFF above everything and ALL below everything.
func SlogLevel(level string) slog.Level {
	switch strings.ToUpper(level) {
	case "ALL":
		return slog.Level(-1 << 20)
	case "TRACE":
		return slog.LevelDebug - 4
	case "DEBUG":
		return slog.LevelDebug
	case "INFO":
		return slog.LevelInfo
	case "WARN":
		return slog.LevelWarn
	case "ERROR":
		return slog.LevelError
	case "FATAL":
		return slog.LevelError + 4
	case "OFF":
		return slog.Level(1 << 20)
	}
	return slog.LevelInfo
}
