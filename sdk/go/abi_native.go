//go:build !wasip1

package sdk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// This file stands in for the WebAssembly side when a plugin package is built and tested natively
// (go test on linux/amd64): stored offsets come from a map the test fills, and log lines go to a
// writer (stderr unless SetLogOutput changes it).

type nativeHost struct {
	mu      sync.Mutex
	offsets map[string][]byte
	out     io.Writer
}

var native = &nativeHost{offsets: map[string][]byte{}, out: os.Stderr}

var defaultHost host = native

func (h *nativeHost) log(level LogLevel, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.out, "[%s] %s\n", level, msg)
}

func (h *nativeHost) offsetGet(partition []byte) ([]byte, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b, ok := h.offsets[string(partition)]
	return bytes.Clone(b), ok, nil
}

// SetStoredOffset stores offset for a source partition, as the host would after Kafka acknowledged a
// record; TaskContext.Offset returns it. A nil offset removes it. Native builds only (tests).
func SetStoredOffset(partition, offset map[string]any) {
	p, err := json.Marshal(partition)
	if err != nil {
		panic(err)
	}
	native.mu.Lock()
	defer native.mu.Unlock()
	if offset == nil {
		delete(native.offsets, string(p))
		return
	}
	o, err := json.Marshal(offset)
	if err != nil {
		panic(err)
	}
	native.offsets[string(p)] = o
}

// ResetStoredOffsets removes all offsets stored with SetStoredOffset. Native builds only.
func ResetStoredOffsets() {
	native.mu.Lock()
	defer native.mu.Unlock()
	clear(native.offsets)
}

// SetLogOutput sends log lines to w (default os.Stderr). Native builds only.
func SetLogOutput(w io.Writer) {
	native.mu.Lock()
	defer native.mu.Unlock()
	native.out = w
}

// Invoke runs an ABI operation on the plugins registered in this process, as the host would through
// wc_call, and returns a copy of the result. An error result is returned as an error;
// IsRetriable reports its retriable bit and a recovered panic is a *PanicError. Native builds only:
// it lets a plugin's tests drive it through the real dispatch code without WebAssembly.
func Invoke(op wire.Op, handle int32, input []byte) ([]byte, error) {
	out, err := defaultDispatcher.handle(op, handle, input)
	if err != nil {
		return nil, err
	}
	return bytes.Clone(out), nil
}

// Describe returns the module's descriptor JSON, as wc_describe would. Native builds only.
func Describe() []byte { return bytes.Clone(defaultDispatcher.describe()) }
