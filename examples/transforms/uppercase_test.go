package transforms

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// buildC builds uppercase.c with the command README.md gives, or skips (fails in CI) when the
// toolchain is missing (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32).
func buildC(t *testing.T) string {
	t.Helper()
	clang, err := exec.LookPath("clang")
	if err != nil {
		pluginbuild.Missing(t, "clang", "apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32")
	}
	if _, err := exec.LookPath("wasm-ld"); err != nil {
		pluginbuild.Missing(t, "wasm-ld", "apt-get install lld")
	}
	if _, err := os.Stat("/usr/include/wasm32-wasi/stdlib.h"); err != nil {
		pluginbuild.Missing(t, "wasi-libc", "apt-get install wasi-libc")
	}
	dir := t.TempDir()
	cmd := exec.Command(clang, "--target=wasm32-wasi", "-O2", "-mexec-model=reactor", "-Wl,--strip-all", "-Wall", "-Werror",
		"-o", filepath.Join(dir, "uppercase.wasm"), "uppercase/uppercase.c")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building uppercase.c: %v\n%s", err, out)
	}
	return dir
}

func TestUppercaseValueInWasm(t *testing.T) {
	dir := buildC(t)
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasmhost.Config{
		PluginPath: []string{dir}, CallTimeout: 5 * time.Second, MemoryLimitBytes: 16 << 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	if errs := h.LoadErrors(); len(errs) > 0 {
		t.Fatal(errs)
	}
	p, err := h.Resolve("com.example.transforms.UppercaseValue", wire.KindTransformation)
	if err != nil {
		t.Fatal(err)
	}
	s := h.NewSession(wasmhost.Env{Connector: "upper"})
	defer s.Close(ctx)
	tr, err := s.Open(ctx, p, wire.RoleTransformation, map[string]string{"header": "x-case"})
	if err != nil {
		t.Fatal(err)
	}
	in := []wire.Record{
		{Topic: "lines", Partition: 0, Offset: 10, Timestamp: 1700000000000, Key: wire.String("k"), Value: wire.String("hello, wasm!"),
			Headers: []wire.Header{{Key: "h", Value: wire.Bytes([]byte{1})}}},
		{Topic: "lines", Partition: 0, Offset: 11, Timestamp: -1, Value: wire.Null()},
		{Topic: "lines", Partition: 1, Offset: 12, Timestamp: -1, Value: wire.JSON(nil, []byte(`{"a":1}`))},
		{Topic: "lines", Partition: 1, Offset: 13, Timestamp: -1, Value: wire.String("Ünïcode stays, ascii goes UP")},
	}
	out, failed, err := tr.Transform(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	upper := func(r wire.Record, v string) wire.Record {
		r.Value = wire.String(v)
		r.Headers = append(append([]wire.Header{}, r.Headers...), wire.Header{Key: "x-case", Value: wire.String("uppercased")})
		return r
	}
	want := []wire.TransformedRecord{
		{Input: 0, Record: upper(in[0], "HELLO, WASM!")},
		{Input: 1, Unchanged: true, Record: in[1]},
		{Input: 3, Record: upper(in[3], "ÜNïCODE STAYS, ASCII GOES UP")},
	}
	if !reflect.DeepEqual(out, want) {
		t.Fatalf("Transform:\n got %+v\nwant %+v", out, want)
	}
	if want := []wire.RecordFailure{{Input: 2, Class: wire.DataException, Message: "UppercaseValue supports STRING values only"}}; !reflect.DeepEqual(failed, want) {
		t.Fatalf("failures %+v", failed)
	}
	// The input was not changed, and the next call reuses the guest's buffers.
	if string(in[0].Value.Bytes) != "hello, wasm!" {
		t.Fatalf("input changed: %q", in[0].Value.Bytes)
	}
	big := make([]wire.Record, 2000)
	for i := range big {
		big[i] = wire.Record{Topic: "t", Partition: -1, Offset: -1, Timestamp: -1, Value: wire.String("abc")}
	}
	out, failed, err = tr.Transform(ctx, big)
	if err != nil || len(failed) != 0 || len(out) != 2000 || string(out[1999].Record.Value.Bytes) != "ABC" {
		t.Fatalf("large batch: %d outputs, %v, %v", len(out), failed, err)
	}
}
