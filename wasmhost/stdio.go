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
	// stderrHead and stderrTail bound what a TrapError keeps of the failed call's stderr: its start
	// (a Go guest's "panic: ..." or "fatal error: out of memory" line and the failing goroutine)
	// and its end (a Rust or Zig guest's last words), ~4 KiB in all.
	stderrHead = 2 << 10
	stderrTail = 2 << 10
)

// lineLogger turns a guest's stdout or stderr into one log record per non-empty line, tagged by
// the logger it was made with (connector, task, module). With keep set it also remembers the start
// and the end of what was written since startCall, for TrapError.
//
// WASI writes happen during a guest call, so the owning instance's mutex already serialises them;
// lineLogger itself is not goroutine-safe.
type lineLogger struct {
	log    *slog.Logger
	level  slog.Level
	stream string
	buf    []byte // an incomplete line

	keep   bool
	head   []byte // the first stderrHead bytes written in the current call
	tail   []byte // the last bytes written in the current call (at least stderrTail once that many came)
	inCall int    // bytes written in the current call
}

func newLineLogger(log *slog.Logger, level slog.Level, stream string, keep bool) *lineLogger {
	return &lineLogger{log: log, level: level, stream: stream, keep: keep}
}

// startCall forgets the previous call's output.
func (w *lineLogger) startCall() {
	w.head, w.tail, w.inCall = w.head[:0], w.tail[:0], 0
}

func (w *lineLogger) Write(p []byte) (int, error) {
	if w.keep {
		w.inCall += len(p)
		if n := min(len(p), stderrHead-len(w.head)); n > 0 {
			w.head = append(w.head, p[:n]...)
		}
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
	w.emit(w.buf)
	w.buf = w.buf[:0]
}

func (w *lineLogger) emit(line []byte) {
	line = bytes.TrimRight(line, "\r")
	if len(line) > 0 {
		w.log.Log(context.Background(), w.level, string(line), "stream", w.stream)
	}
}

// Output returns what was written since startCall: all of it up to ~4 KiB, else its start and its
// end cut at line boundaries.
func (w *lineLogger) Output() string {
	switch {
	case w.inCall <= stderrHead:
		return strings.TrimRight(string(w.head), "\n")
	case w.inCall <= stderrHead+stderrTail:
		return strings.TrimRight(string(w.head)+string(w.tail[len(w.tail)-(w.inCall-stderrHead):]), "\n")
	}
	head := w.head
	if i := bytes.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i]
	}
	tail := w.tail[len(w.tail)-stderrTail:]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	return string(head) + "\n...\n" + strings.TrimRight(string(tail), "\n")
}
