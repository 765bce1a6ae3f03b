package wasmhost

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
)

const (
	// maxLogLine bounds one log record made from guest output, so that a guest writing megabytes
	// without a newline cannot make the worker build one huge log line.
	maxLogLine = 16 << 10
	// stderrTail is how much of a guest's stderr a TrapError keeps: enough for a Go panic message and
	// the top of its goroutine trace.
	stderrTail = 4 << 10
)

// lineLogger turns a guest's stdout or stderr into one log record per line, tagged by the logger it
// was made with (connector, task, module). The stderr writer also keeps the tail of what was written
// for TrapError.
//
// WASI writes happen during a guest call, so the owning instance's mutex already serialises them;
// lineLogger itself is not goroutine-safe.
type lineLogger struct {
	log    *slog.Logger
	level  slog.Level
	stream string
	buf    []byte
	tail   []byte // recent output, when keep is set
	keep   bool
}

func newLineLogger(log *slog.Logger, level slog.Level, stream string, keepTail bool) *lineLogger {
	return &lineLogger{log: log, level: level, stream: stream, keep: keepTail}
}

func (w *lineLogger) Write(p []byte) (int, error) {
	if w.keep {
		w.tail = append(w.tail, p...)
		if len(w.tail) > 2*stderrTail { // trim rarely, not on every write
			w.tail = append(w.tail[:0], w.tail[len(w.tail)-stderrTail:]...)
		}
	}
	w.buf = append(w.buf, p...)
	start := 0
	for {
		i := bytes.IndexByte(w.buf[start:], '\n')
		if i < 0 {
			break
		}
		w.emit(w.buf[start : start+i])
		start += i + 1
	}
	rest := w.buf[start:]
	for len(rest) > maxLogLine {
		w.emit(rest[:maxLogLine])
		rest = rest[maxLogLine:]
	}
	w.buf = append(w.buf[:0], rest...)
	return len(p), nil
}

// flush logs a last line that had no newline.
func (w *lineLogger) flush() {
	if len(w.buf) > 0 {
		w.emit(w.buf)
		w.buf = w.buf[:0]
	}
}

func (w *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	w.log.Log(context.Background(), w.level, string(line), "stream", w.stream)
}

// Tail returns the last stderrTail bytes written, starting at a line boundary when it was cut.
func (w *lineLogger) Tail() string {
	t := w.tail
	if len(t) > stderrTail {
		t = t[len(t)-stderrTail:]
		if i := bytes.IndexByte(t, '\n'); i >= 0 && i < len(t)-1 {
			t = t[i+1:]
		}
		return "...\n" + strings.TrimRight(string(t), "\n")
	}
	return strings.TrimRight(string(t), "\n")
}
