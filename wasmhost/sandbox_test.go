package wasmhost

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

func openTask(t *testing.T, h *Host, s *Session, name string) *Object {
	t.Helper()
	o, err := s.Open(context.Background(), mustResolve(t, h, name), wire.RoleTask, map[string]string{"topic": "t"})
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	return o
}

func TestTrapPoisonsOnlyItsInstance(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	a := h.NewSession(Env{Connector: "a", Task: 0})
	defer a.Close(ctx)
	flakyA := openTask(t, h, a, "Flaky")
	trapper := openTask(t, h, a, "Trapper")
	seqA := openTask(t, h, a, "SeqSource") // another module: another instance

	_, err := trapper.Poll(ctx)
	var te *TrapError
	if !errors.As(err, &te) {
		t.Fatalf("want a *TrapError, got %T %v", err, err)
	}
	if te.Plugin != "Trapper" || te.Op != "POLL" || te.Timeout || te.OutOfMemory || te.Stderr != "panic: boom" {
		t.Fatalf("TrapError = %+v", te)
	}
	msg := err.Error()
	for _, want := range []string{
		`plugin "Trapper" POLL trapped: wasm error: unreachable`,
		"wasm stack trace:",
		"\nguest stderr:\npanic: boom",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error text lacks %q:\n%s", want, msg)
		}
	}

	// Every later call into that instance fails without calling in (Flaky would answer with its
	// retriable guest error if it were called).
	_, err = flakyA.Poll(ctx)
	if !errors.Is(err, ErrInstanceFailed) || !errors.As(err, &te) || te.Plugin != "Trapper" {
		t.Fatalf("call after trap: %v", err)
	}
	if !strings.Contains(err.Error(), `plugin "Flaky" POLL not called: the module instance failed earlier (plugin "Trapper" POLL trapped`) {
		t.Fatalf("call after trap: %v", err)
	}
	if _, err := a.Open(ctx, mustResolve(t, h, "Wild"), wire.RoleTask, nil); !errors.Is(err, ErrInstanceFailed) {
		t.Fatalf("open after trap: %v", err)
	}
	if err := flakyA.Close(ctx); err != nil {
		t.Fatalf("closing an object of a failed instance: %v", err)
	}
	// The session's other instance and other sessions of the same module are unaffected.
	if _, err := seqA.Poll(ctx); err != nil {
		t.Fatalf("other instance in the session: %v", err)
	}
	b := h.NewSession(Env{Connector: "b", Task: 0})
	defer b.Close(ctx)
	var ge *GuestError
	_, err = openTask(t, h, b, "Flaky").Poll(ctx)
	if !errors.As(err, &ge) || !ge.Retriable || ge.Message != "source not ready" || ge.Plugin != "Flaky" {
		t.Fatalf("other session: %v", err)
	}
	var retriable interface{ IsRetriable() bool }
	if !errors.As(err, &retriable) || !retriable.IsRetriable() {
		t.Fatalf("a retriable guest error must say so by behaviour too: %v", err)
	}
	if err.Error() != `plugin "Flaky" POLL failed: source not ready` {
		t.Fatalf("guest error text: %s", err)
	}
}

// A guest that spins is stopped at plugin.call.timeout.ms: Spinner's loop is (loop (br 0)), and
// Clearer's is memory.fill of 4 MiB, one instruction, which before fuel charged bulk operations
// their length ran a quantum for hours and hung the whole process.
func TestInfiniteLoopIsStopped(t *testing.T) {
	for _, plugin := range []string{"Spinner", "Clearer"} {
		t.Run(plugin, func(t *testing.T) {
			const timeout = 200 * time.Millisecond
			h, _ := newTestHost(t, Config{CallTimeout: timeout})
			ctx := context.Background()
			s := h.NewSession(Env{Connector: "spin", Task: 0})
			defer s.Close(ctx)
			spinner := openTask(t, h, s, plugin)

			start := time.Now()
			_, err := spinner.Poll(ctx)
			elapsed := time.Since(start)
			var te *TrapError
			if !errors.As(err, &te) || !te.Timeout {
				t.Fatalf("want a timeout TrapError, got %v", err)
			}
			if elapsed < timeout || elapsed > timeout+time.Second {
				t.Fatalf("the loop was stopped after %s, want about %s", elapsed, timeout)
			}
			// The text names how long the call ran, which on a loaded machine may be well past the timeout.
			if want := `plugin "` + plugin + `" POLL timed out: aborted after `; !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error text: %s", err)
			}
			runtime.GC() // would hang if the guest were still spinning on some thread

			other := h.NewSession(Env{Connector: "ok", Task: 0})
			defer other.Close(ctx)
			if _, err := openTask(t, h, other, "SeqSource").Poll(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCanceledCallFailsInstance(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	s := h.NewSession(Env{Connector: "c", Task: 0})
	defer s.Close(context.Background())
	spinner := openTask(t, h, s, "Spinner")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err := spinner.Poll(ctx)
	var te *TrapError
	if !errors.As(err, &te) || te.Timeout || !errors.Is(err, context.Canceled) {
		t.Fatalf("want a canceled TrapError, got %v", err)
	}
	if !strings.Contains(err.Error(), `plugin "Spinner" POLL was canceled`) {
		t.Fatalf("error text: %s", err)
	}
}

func TestMemoryCap(t *testing.T) {
	h, _ := newTestHost(t, Config{MemoryLimitBytes: 8 << 20})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "hog", Task: 0})
	defer s.Close(ctx)
	_, err := openTask(t, h, s, "Hog").Poll(ctx)
	var te *TrapError
	if !errors.As(err, &te) || !te.OutOfMemory || te.Timeout {
		t.Fatalf("want an out-of-memory TrapError, got %v", err)
	}
	if te.memBytes > 8<<20 || !strings.Contains(err.Error(), "of its 8 MiB limit") {
		t.Fatalf("memory %d bytes, error: %s", te.memBytes, err)
	}
	// A module whose initial memory is over the cap is a load error (TestLoadErrorsDoNotStopOthers).
}

func TestBadGuestPointersAreGuestErrors(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c", Task: 0})
	defer s.Close(ctx)
	var ge *GuestError
	_, err := openTask(t, h, s, "Wild").Poll(ctx)
	if !errors.As(err, &ge) || !strings.Contains(ge.Message, "returned a result buffer at 0xfffffff0 (+100 bytes) outside its 65536-byte memory") {
		t.Fatalf("out-of-range result: %v", err)
	}
	_, err = openTask(t, h, s, "Liar").Poll(ctx)
	if !errors.As(err, &ge) || !strings.Contains(ge.Message, "passed log a buffer at 0x7ffffff0 (+100 bytes) outside") {
		t.Fatalf("bad pointer to log: %v", err)
	}
	// Neither is a trap: the instance goes on serving.
	if _, err := openTask(t, h, s, "Flaky").Poll(ctx); !errors.As(err, &ge) || !ge.Retriable {
		t.Fatalf("instance after guest errors: %v", err)
	}
}

func TestGuestExitFailsInstance(t *testing.T) {
	h, _ := newTestHost(t, Config{})
	ctx := context.Background()
	s := h.NewSession(Env{Connector: "c", Task: 0})
	defer s.Close(ctx)
	quitter := openTask(t, h, s, "Quitter")
	_, err := quitter.Poll(ctx)
	var te *TrapError
	if !errors.As(err, &te) || te.Timeout || te.OutOfMemory || err.Error() != `plugin "Quitter" POLL exited with code 3` {
		t.Fatalf("want an exit TrapError, got %v", err)
	}
	if _, err := quitter.Poll(ctx); !errors.Is(err, ErrInstanceFailed) {
		t.Fatalf("call after exit: %v", err)
	}
}
