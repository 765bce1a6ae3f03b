package wasmhost

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// fixtureDir holds the testdata/*.wat fixtures compiled to .wasm by TestMain, plus garbage.wasm.
var fixtureDir string

func TestMain(m *testing.M) {
	dir, err := buildFixtures()
	if err != nil {
		fmt.Fprintln(os.Stderr, "wasmhost tests:", err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	pluginbuild.Cleanup()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildFixtures compiles the WAT fixtures with wat2wasm (Debian package wabt), so that the
// repository holds readable sources only.
func buildFixtures() (string, error) {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		return "", fmt.Errorf("wat2wasm not found; install wabt (apt-get install wabt)")
	}
	dir, err := os.MkdirTemp("", "wasmhost-fixtures-")
	if err != nil {
		return "", err
	}
	srcs, err := filepath.Glob("testdata/*.wat")
	if err != nil || len(srcs) == 0 {
		return "", fmt.Errorf("no testdata/*.wat fixtures (%v)", err)
	}
	// The foreign and broken modules the worker and plugin check are tested with too.
	foreign, _ := filepath.Glob("../plugins/testdata/foreign/*.wat")
	srcs = append(srcs, foreign...)
	for _, src := range srcs {
		out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(src), ".wat")+".wasm")
		if b, err := exec.Command(wat2wasm, "--debug-names", src, "-o", out).CombinedOutput(); err != nil {
			return "", fmt.Errorf("wat2wasm %s: %v\n%s", src, err, b)
		}
	}
	// good_v2: the next version of good, for the reload tests: plugin versions 0.2.0, and its
	// records' values say "VALUE-" (same lengths, so that the data offsets stay put).
	b, err := os.ReadFile("testdata/good.wat")
	if err != nil {
		return "", err
	}
	v2 := strings.ReplaceAll(strings.ReplaceAll(string(b), `0.1.0`, `0.2.0`), `"value-\00"`, `"VALUE-\00"`)
	src := filepath.Join(dir, "good_v2.wat")
	if err := os.WriteFile(src, []byte(v2), 0o644); err != nil {
		return "", err
	}
	if b, err := exec.Command(wat2wasm, "--debug-names", src, "-o", filepath.Join(dir, "good_v2.wasm")).CombinedOutput(); err != nil {
		return "", fmt.Errorf("wat2wasm %s: %v\n%s", src, err, b)
	}
	err = os.WriteFile(filepath.Join(dir, "garbage.wasm"), []byte("this is not a WebAssembly module\n"), 0o644)
	return dir, err
}

// pluginDir builds a plugin directory: layout maps a path inside it to a fixture name.
func pluginDir(t testing.TB, layout map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for dst, fixture := range layout {
		b, err := os.ReadFile(filepath.Join(fixtureDir, fixture+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, dst)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// standardLayout is a healthy plugin directory: one module at the top, one in a plugin folder.
var standardLayout = map[string]string{
	"good.wasm":           "good",
	"misc/misbehave.wasm": "misbehave",
}

// newTestHost starts a host with test defaults (8 MiB memory cap, 5 s call timeout, a captured log)
// and closes it when the test ends.
func newTestHost(t testing.TB, cfg Config) (*Host, *logSink) { return newTestHostBound(t, cfg, nil) }

func newTestHostBound(t testing.TB, cfg Config, cpu cpuBound) (*Host, *logSink) {
	t.Helper()
	sink := &logSink{}
	if cfg.PluginPath == nil {
		cfg.PluginPath = []string{pluginDir(t, standardLayout)}
	}
	if cfg.MemoryLimitBytes == 0 {
		cfg.MemoryLimitBytes = 8 << 20
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = 5 * time.Second
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: LevelTrace}))
	h, err := newHost(context.Background(), cfg, hostOptions{cpu: cpu})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, sink
}

func mustResolve(t testing.TB, h *Host, name string) Plugin {
	t.Helper()
	p, err := h.Resolve(name, "")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// logSink collects JSON log lines.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

// find returns the first record whose message starts with prefix.
func (s *logSink) find(t testing.TB, prefix string) map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	sc := bufio.NewScanner(bytes.NewReader(s.buf.Bytes()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q: %v", sc.Bytes(), err)
		}
		if msg, _ := rec["msg"].(string); strings.HasPrefix(msg, prefix) {
			return rec
		}
	}
	t.Fatalf("no log record starting with %q in:\n%s", prefix, s.buf.String())
	return nil
}

// offsets is an OffsetReader over fixed partition -> offset JSON.
type offsets map[string]string

func (o offsets) Offset(partition []byte) ([]byte, bool) {
	v, ok := o[string(partition)]
	return []byte(v), ok
}
