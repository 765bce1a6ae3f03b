package logging

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// LoggerKey is the attribute that names a record's logger, set with Logger.With(LoggerKey, name)
// or on the record itself. Without it, a record's logger is its component: the package of the code
// that logged it ("wasmconnect.runtime.task", "wasmconnect.wasmhost"; see Component).
const LoggerKey = "logger"

// Components are the loggers of wasmconnect's packages that log. Wrap registers them, so that
// they can be looked up and set before they have logged anything.
var Components = []string{
	"wasmconnect.cmd",
	"wasmconnect.hcl",
	"wasmconnect.runtime.broker",
	"wasmconnect.runtime.cluster",
	"wasmconnect.runtime.herder",
	"wasmconnect.runtime.node",
	"wasmconnect.runtime.rest",
	"wasmconnect.runtime.store",
	"wasmconnect.runtime.task",
	"wasmconnect.runtime.worker",
	"wasmconnect.wasmhost",
}

// Handler is a slog.Handler that lets through only the records its logger's level allows, then
// hands them to the handler it wraps, whose own level it bypasses: the levels in Levels are the
// only filter, so lowering one below the level the wrapped handler was created with works.
type Handler struct {
	inner   slog.Handler
	levels  *Levels
	name    string // the logger bound with With(LoggerKey, name); "" if none
	grouped bool   // attributes now go into a group: a "logger" among them names nothing
}

// NewHandler wraps inner with the loggers of levels.
func NewHandler(inner slog.Handler, levels *Levels) *Handler {
	return &Handler{inner: inner, levels: levels}
}

// Wrap returns a logger that writes through l's handler with per-logger levels. The root level
// is the most verbose level l lets through (TRACE, DEBUG, INFO, WARN or ERROR); Components are
// registered. Loggers derived from the result (With, WithGroup) share its levels; LevelsOf
// finds them.
func Wrap(l *slog.Logger) *slog.Logger {
	if LevelsOf(l) != nil {
		return l
	}
	inner := l.Handler()
	root := "OFF"
	for _, name := range []string{"TRACE", "DEBUG", "INFO", "WARN", "ERROR"} {
		if inner.Enabled(context.Background(), connect.SlogLevel(name)) {
			root = name
			break
		}
	}
	levels := NewLevels(root)
	levels.Register(Components...)
	return slog.New(NewHandler(inner, levels))
}

// LevelsOf returns the levels of a logger made by Wrap or NewHandler, or nil.
func LevelsOf(l *slog.Logger) *Levels {
	if l == nil {
		return nil
	}
	if h, ok := l.Handler().(*Handler); ok {
		return h.levels
	}
	return nil
}

// Levels returns the handler's levels.
func (h *Handler) Levels() *Levels { return h.levels }

// Enabled reports whether some logger could let a record at level through: the bound logger's
// level if there is one, else the most verbose level of all (Handle then decides by the
// record's own logger).
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	if h.name != "" {
		return h.levels.Enabled(h.name, level)
	}
	return level >= h.levels.minLevel()
}

// Handle passes r to the wrapped handler if its logger's level lets it through.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	name := h.name
	if name == "" && !h.grouped && r.NumAttrs() > 0 {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == LoggerKey {
				name = a.Value.String()
				return false
			}
			return true
		})
	}
	if name == "" {
		name = Component(r.PC)
	}
	h.levels.see(name)
	if !h.levels.Enabled(name, r.Level) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs returns a handler whose records carry attrs; a LoggerKey attribute binds the logger.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.inner = h.inner.WithAttrs(attrs)
	if !h.grouped {
		for _, a := range attrs {
			if a.Key == LoggerKey {
				c.name = a.Value.String()
				h.levels.see(c.name)
			}
		}
	}
	return &c
}

// WithGroup returns a handler that puts later attributes in group name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.inner = h.inner.WithGroup(name)
	c.grouped = true
	return &c
}

const module = "github.com/wasmconnect/wasmconnect/"

var components sync.Map // pc -> logger name

// Component returns the logger of the code at pc: its package's import path with dots, with
// wasmconnect's module path shortened to "wasmconnect." ("wasmconnect.runtime.task"); the main
// package is "wasmconnect.cmd". A zero pc is the root logger ("").
func Component(pc uintptr) string {
	if pc == 0 {
		return ""
	}
	if v, ok := components.Load(pc); ok {
		return v.(string)
	}
	fn, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	name := componentOf(fn.Function)
	components.Store(pc, name)
	return name
}

// componentOf maps a function's full name ("github.com/x/y/pkg.(*T).m") to its logger name.
func componentOf(function string) string {
	slash := strings.LastIndexByte(function, '/')
	dot := strings.IndexByte(function[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	pkg := function[:slash+1+dot]
	switch {
	case pkg == "main":
		return "wasmconnect.cmd"
	case strings.HasPrefix(pkg, module):
		return "wasmconnect." + strings.ReplaceAll(strings.TrimPrefix(pkg, module), "/", ".")
	}
	return strings.ReplaceAll(pkg, "/", ".")
}
