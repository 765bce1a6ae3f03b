package broker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kfake"
)

// slogAdapter forwards kfake's printf-style log lines to a slog.Logger.
//
// kfake logs every request it serves at its Info level. That is far too
// chatty for a worker's normal log, so kfake's Info is mapped to slog's
// Debug; kfake warnings and errors keep their level.
type slogAdapter struct{ l *slog.Logger }

func (a slogAdapter) Logf(level kfake.LogLevel, format string, args ...any) {
	var lvl slog.Level
	switch level {
	case kfake.LogLevelError:
		lvl = slog.LevelError
	case kfake.LogLevelWarn:
		lvl = slog.LevelWarn
	case kfake.LogLevelNone:
		return
	default:
		lvl = slog.LevelDebug
	}
	ctx := context.Background()
	if !a.l.Enabled(ctx, lvl) {
		return
	}
	a.l.Log(ctx, lvl, fmt.Sprintf(format, args...))
}
