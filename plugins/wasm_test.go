//go:build !wasip1

package plugins_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// modules are the plugins these tests build, by the name of their module.
var modules = map[string]string{
	"file.wasm":       "plugins/file",
	"transforms.wasm": "plugins/transforms", // with the converters
	"faulty.wasm":     "plugins/testdata/faulty",
	"hostile.wasm":    "plugins/testdata/hostile",
}

func TestMain(m *testing.M) {
	code := m.Run()
	pluginbuild.Cleanup()
	os.Exit(code)
}

// buildModules builds the plugins with the documented command, once per test binary, and returns
// the directory that holds them.
func buildModules(t *testing.T) string {
	t.Helper()
	return pluginbuild.DirOf(t, slices.Collect(maps.Values(modules))...)
}

// wasmNames lists a module's exports and imports ("module.name") from its binary.
func wasmNames(b []byte) (exports, imports map[string]byte, err error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return nil, nil, errors.New("not a wasm module")
	}
	exports, imports = map[string]byte{}, map[string]byte{}
	r := bytes.NewReader(b[8:])
	u32 := func() uint32 { v, _ := binary.ReadUvarint(r); return uint32(v) }
	name := func() string {
		n := u32()
		s := make([]byte, n)
		io.ReadFull(r, s)
		return string(s)
	}
	for r.Len() > 0 {
		id, _ := r.ReadByte()
		size := u32()
		start := r.Size() - int64(r.Len())
		switch id {
		case 2: // imports
			for range u32() {
				mod, n := name(), name()
				kind, _ := r.ReadByte()
				imports[mod+"."+n] = kind
				switch kind {
				case 0:
					u32()
				case 1:
					r.ReadByte()
					if f, _ := r.ReadByte(); f&1 != 0 {
						u32()
					}
					u32()
				case 2:
					if f, _ := r.ReadByte(); f&1 != 0 {
						u32()
					}
					u32()
				case 3:
					r.ReadByte()
					r.ReadByte()
				}
			}
		case 7: // exports
			for range u32() {
				n := name()
				kind, _ := r.ReadByte()
				u32()
				exports[n] = kind
			}
		}
		if _, err := r.Seek(start+int64(size), io.SeekStart); err != nil {
			return nil, nil, err
		}
	}
	return exports, imports, nil
}

func TestModulesHaveTheABIShape(t *testing.T) {
	dir := buildModules(t)
	for out := range modules {
		b, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		exports, imports, err := wasmNames(b)
		if err != nil {
			t.Fatalf("%s: %v", out, err)
		}
		for _, e := range []string{"memory", "_initialize", "wc_abi_version", "wc_alloc", "wc_free", "wc_describe", "wc_call"} {
			if _, ok := exports[e]; !ok {
				t.Errorf("%s does not export %s (exports: %v)", out, e, exports)
			}
		}
		// The linker keeps only the imports a module uses: a plugin that never reads offsets does
		// not import offset_get.
		if out == "file.wasm" {
			for _, i := range []string{"wasmconnect.log", "wasmconnect.offset_get"} {
				if _, ok := imports[i]; !ok {
					t.Errorf("%s does not import %s", out, i)
				}
			}
		}
		for i := range imports {
			if mod, _, _ := strings.Cut(i, "."); mod != "wasi_snapshot_preview1" && i != "wasmconnect.log" && i != "wasmconnect.offset_get" {
				t.Errorf("%s imports %s, which the host does not provide", out, i)
			}
		}
	}
}

type offsets map[string]string

func (o offsets) Offset(p []byte) ([]byte, bool) {
	v, ok := o[string(p)]
	return []byte(v), ok
}

func newHost(t *testing.T, allow string) *wasmhost.Host {
	t.Helper()
	dir := buildModules(t)
	ctx := context.Background()
	var logs bytes.Buffer
	h, err := wasmhost.New(ctx, wasmhost.Config{
		PluginPath:       []string{dir},
		FSAllow:          []string{allow},
		CallTimeout:      4 * time.Second, // generous: the oom fault needs about 0.5 s, more on a loaded machine
		MemoryLimitBytes: 64 << 20,
		CacheDir:         filepath.Join(os.TempDir(), "wasmconnect-plugins-test-cache"),
		Logger:           slog.New(slog.NewTextHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.Close(ctx)
		if t.Failed() {
			t.Logf("host log:\n%s", logs.String())
		}
	})
	if errs := h.LoadErrors(); len(errs) > 0 {
		t.Fatalf("load errors: %v", errs)
	}
	return h
}

func resolve(t *testing.T, h *wasmhost.Host, name string, kind wire.Kind) wasmhost.Plugin {
	t.Helper()
	p, err := h.Resolve(name, kind)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFilePipelineInWasm(t *testing.T) {
	files := t.TempDir()
	h := newHost(t, files)
	ctx := context.Background()
	in, out := filepath.Join(files, "in.txt"), filepath.Join(files, "out.txt")
	if err := os.WriteFile(in, []byte("alpha\nbeta\ngam"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := resolve(t, h, "FileStreamSource", wire.KindSource)
	if src.Class != "org.apache.kafka.connect.file.FileStreamSourceConnector" {
		t.Errorf("class %s", src.Class)
	}
	cfg := map[string]string{"file": in, "topic": "lines"}

	sess := h.NewSession(wasmhost.Env{Connector: "file-source"})
	conn, err := sess.Open(ctx, src, wire.RoleConnector, cfg)
	if err != nil {
		t.Fatal(err)
	}
	tcs, err := conn.TaskConfigs(ctx, 3)
	if err != nil || len(tcs) != 1 {
		t.Fatalf("task configs %v %v", tcs, err)
	}
	task, err := sess.Open(ctx, src, wire.RoleTask, tcs[0])
	if err != nil {
		t.Fatal(err)
	}
	recs, err := task.Poll(ctx)
	if err != nil || len(recs) != 2 || string(recs[1].Value.Bytes) != "beta" {
		t.Fatalf("poll: %+v %v", recs, err)
	}
	part, off := string(recs[1].SourcePartition), string(recs[1].SourceOffset)
	if part != fmt.Sprintf(`{"filename":%q}`, in) || off != `{"position":11}` || len(recs[0].SourceOffset) != 0 {
		t.Fatalf("partition %s offset %s (first record %q)", part, off, recs[0].SourceOffset)
	}
	if recs, err := task.Poll(ctx); err != nil || len(recs) != 0 {
		t.Fatalf("partial line polled: %+v %v", recs, err)
	}
	sess.Close(ctx)

	// A new task resumes from the stored offset.
	f, _ := os.OpenFile(in, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("ma\ndelta\n")
	f.Close()
	sess = h.NewSession(wasmhost.Env{Connector: "file-source", Offsets: offsets{part: off}})
	defer sess.Close(ctx)
	task, err = sess.Open(ctx, src, wire.RoleTask, tcs[0])
	if err != nil {
		t.Fatal(err)
	}
	recs, err = task.Poll(ctx)
	if err != nil || len(recs) != 2 || string(recs[0].Value.Bytes) != "gamma" || string(recs[1].SourceOffset) != `{"position":23}` {
		t.Fatalf("resumed poll: %+v %v", recs, err)
	}

	// The JsonConverter writes what Kafka's FileStreamSource + JsonConverter write.
	jc, err := sess.Open(ctx, resolve(t, h, "org.apache.kafka.connect.json.JsonConverter", wire.KindConverter), wire.RoleConverter,
		map[string]string{"converter.type": "value"})
	if err != nil {
		t.Fatal(err)
	}
	bs, err := jc.FromConnect(ctx, []wire.TopicData{{Topic: "lines", Value: recs[0].Value}, {Topic: "lines", Value: wire.Null()}})
	if err != nil || len(bs) != 2 || string(bs[0]) != `{"schema":{"type":"string","optional":false},"payload":"gamma"}` || bs[1] != nil {
		t.Fatalf("FromConnect: %q %v", bs, err)
	}
	ds, err := jc.ToConnect(ctx, []wire.TopicBytes{{Topic: "lines", Bytes: bs[0]}})
	if err != nil || len(ds) != 1 || string(ds[0].Bytes) != `"gamma"` {
		t.Fatalf("ToConnect: %+v %v", ds, err)
	}
	_, err = jc.ToConnect(ctx, []wire.TopicBytes{{Topic: "lines", Bytes: []byte(`{"a":1}`)}})
	var ge *wasmhost.GuestError
	if !errors.As(err, &ge) || !strings.Contains(ge.Message, `JsonConverter with schemas.enable requires "schema" and "payload" fields`) {
		t.Fatalf("plain JSON with schemas: %v", err)
	}

	// The sink writes the lines.
	sinkSess := h.NewSession(wasmhost.Env{Connector: "file-sink"})
	defer sinkSess.Close(ctx)
	sink, err := sinkSess.Open(ctx, resolve(t, h, "FileStreamSink", wire.KindSink), wire.RoleTask, map[string]string{"file": out})
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(ctx, []wire.TopicPartitionOffset{{Topic: "lines", Partition: 0, Offset: 2}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "gamma\ndelta\n" {
		t.Fatalf("sink file %q", b)
	}
	_, err = sinkSess.Open(ctx, resolve(t, h, "FileStreamSink", wire.KindSink), wire.RoleTask, map[string]string{"file": "/etc/out.txt"})
	if err == nil || !strings.Contains(err.Error(), `plugin.fs.allow does not grant access to "/etc/out.txt" (granted: `+files+`)`) {
		t.Fatalf("sink outside fs.allow: %v", err)
	}
}

// TestFileSinkPluginDropsPartialLineLeftByACrash starts the FileStreamSink plugin on a file whose
// last line a crash cut short: the plugin removes the partial line before writing, so the record
// redelivered after the crash is a line of its own.
func TestFileSinkPluginDropsPartialLineLeftByACrash(t *testing.T) {
	files := t.TempDir()
	h := newHost(t, files)
	ctx := context.Background()
	out := filepath.Join(files, "out.txt")
	if err := os.WriteFile(out, []byte("line-52499\nline-"), 0o644); err != nil {
		t.Fatal(err)
	}
	sess := h.NewSession(wasmhost.Env{Connector: "file-sink"})
	defer sess.Close(ctx)
	sink, err := sess.Open(ctx, resolve(t, h, "FileStreamSink", wire.KindSink), wire.RoleTask, map[string]string{"file": out})
	if err != nil {
		t.Fatal(err)
	}
	recs := []wire.Record{{Topic: "lines", Offset: 52500, Value: wire.String("line-52500")}, {Topic: "lines", Offset: 52501, Value: wire.String("line-52501")}}
	if err := sink.Put(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := sink.Flush(ctx, []wire.TopicPartitionOffset{{Topic: "lines", Partition: 0, Offset: 52502}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "line-52499\nline-52500\nline-52501\n" {
		t.Fatalf("sink file %q, want the partial line replaced by the redelivered records", b)
	}
}

func TestFaultyPluginInWasm(t *testing.T) {
	files := t.TempDir()
	h := newHost(t, files)
	ctx := context.Background()
	p := resolve(t, h, "wasmconnect.testing.FaultySource", wire.KindSource)
	for _, tc := range []struct {
		fault string
		check func(err error) string // "" if err is as expected
	}{
		{"panic", func(err error) string {
			var ge *wasmhost.GuestError
			if !errors.As(err, &ge) || !strings.Contains(ge.Message, "Faulty: panic during POLL: faulty: deliberate panic on poll 2") || !strings.Contains(ge.Message, "goroutine") {
				return "want a guest error with the panic and its stack"
			}
			return ""
		}},
		{"fs", func(err error) string {
			var ge *wasmhost.GuestError
			if !errors.As(err, &ge) || ge.Message != fmt.Sprintf(`plugin.fs.allow does not grant access to "/etc/passwd" (granted: %s)`, files) {
				return "want a guest error naming the path and the grants"
			}
			return ""
		}},
		{"trap", func(err error) string {
			var te *wasmhost.TrapError
			if !errors.As(err, &te) || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(te.Stderr, "nil pointer dereference") {
				return "want a trap (unreachable) with the Go panic on stderr"
			}
			return ""
		}},
		{"loop", func(err error) string {
			var te *wasmhost.TrapError
			if !errors.As(err, &te) || !te.Timeout {
				return "want a timeout"
			}
			return ""
		}},
		{"oom", func(err error) string {
			var te *wasmhost.TrapError
			if !errors.As(err, &te) || !te.OutOfMemory {
				return "want a trap diagnosed as out of memory"
			}
			return ""
		}},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			sess := h.NewSession(wasmhost.Env{Connector: "faulty-" + tc.fault})
			defer sess.Close(ctx)
			task, err := sess.Open(ctx, p, wire.RoleTask, map[string]string{"fault": tc.fault, "after.polls": "1", "topic": "f"})
			if err != nil {
				t.Fatal(err)
			}
			recs, err := task.Poll(ctx)
			if err != nil || len(recs) != 1 || string(recs[0].Value.Bytes) != "poll 1" || string(recs[0].SourceOffset) != `{"poll":1}` {
				t.Fatalf("first poll: %+v %v", recs, err)
			}
			_, err = task.Poll(ctx)
			if msg := tc.check(err); msg != "" {
				t.Fatalf("%s; got %T: %v", msg, err, err)
			}
			t.Logf("%s: %v", tc.fault, firstLines(err, 3))
			var te *wasmhost.TrapError
			_, again := task.Poll(ctx)
			switch {
			case errors.As(err, &te) && !errors.Is(again, wasmhost.ErrInstanceFailed):
				t.Errorf("call after a trap: %v, want ErrInstanceFailed", again)
			case te == nil && again == nil:
				t.Errorf("the fault did not repeat")
			case te == nil && errors.As(again, &te):
				t.Errorf("a clean guest error left the instance broken: %v", again)
			}
		})
	}
}

func firstLines(err error, n int) string {
	lines := strings.SplitN(fmt.Sprint(err), "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], " | ")
}
