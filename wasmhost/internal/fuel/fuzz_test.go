package fuel

import (
	"strings"
	"testing"
)

// FuzzInstrument checks that instrumenting arbitrary bytes never panics, and
// that a module Instrument accepts stays valid after the rewrite. Run it
// with
//
//	go test -run '^$' -fuzz FuzzInstrument ./wasmhost/internal/fuel/
func FuzzInstrument(f *testing.F) {
	for _, seed := range [][]byte{spinModule, kitchenSink, envModule, coverageModule, exceptionModule, tailCallModule} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		// The rewrite alone sees input that wazero would reject.
		if m, err := decodeModule(wasm); err == nil {
			_, _ = m.instrument()
		}
		out, err := Instrument(wasm, allFeatures)
		if err != nil {
			return
		}
		if err := validate(out, allFeatures); err != nil {
			t.Fatalf("valid module invalid after instrumenting: %v", err)
		}
		if _, err := Instrument(out, allFeatures); err == nil || !strings.Contains(err.Error(), "instrumented already") {
			t.Fatalf("instrumenting twice: %v", err)
		}
	})
}
