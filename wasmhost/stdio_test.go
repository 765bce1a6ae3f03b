package wasmhost

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestLineLogger(t *testing.T) {
	sink := &logSink{}
	w := newLineLogger(slog.New(slog.NewJSONHandler(sink, nil)), slog.LevelWarn, "stderr", true)

	w.startCall()
	fmt.Fprint(w, "panic: boom\n\ngoroutine 1 [run")
	fmt.Fprint(w, "ning]:\n")
	if got := w.Output(); got != "panic: boom\n\ngoroutine 1 [running]:" {
		t.Fatalf("short output: %q", got)
	}
	if rec := sink.find(t, "goroutine 1"); rec["msg"] != "goroutine 1 [running]:" || rec["stream"] != "stderr" || rec["level"] != "WARN" {
		t.Fatalf("a line split across writes: %v", rec)
	}
	if strings.Contains(sink.buf.String(), `"msg":""`) {
		t.Fatal("empty lines must not be logged")
	}

	// A long output keeps its start (the panic line) and its end, cut at line boundaries.
	w.startCall()
	fmt.Fprint(w, "fatal error: out of memory\n")
	for i := range 500 {
		fmt.Fprintf(w, "frame %03d of a long goroutine dump\n", i)
	}
	out := w.Output()
	if !strings.HasPrefix(out, "fatal error: out of memory\nframe 000") || !strings.Contains(out, "\n...\nframe ") ||
		!strings.HasSuffix(out, "frame 499 of a long goroutine dump") || len(out) > stderrHead+stderrTail+8 {
		t.Fatalf("long output (%d bytes):\n%s", len(out), out)
	}

	// A new call starts afresh; a line without a newline is logged on flush.
	w.startCall()
	fmt.Fprint(w, "no newline")
	if w.Output() != "no newline" {
		t.Fatalf("output after startCall: %q", w.Output())
	}
	w.flush()
	sink.find(t, "no newline")
}
