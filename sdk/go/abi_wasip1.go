//go:build wasip1

package sdk

import (
	"runtime"
	"unsafe"

	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// This file is the WebAssembly side of the ABI (sdk/ABI.md §1, §2): the wc_* exports and the
// wasmconnect imports. Everything else is in the platform-independent dispatcher.

var (
	// allocs keeps the blocks handed out by wc_alloc reachable until wc_free, so that the garbage
	// collector does not reuse memory the host writes into.
	allocs = map[uintptr][]byte{}
	// lastResult keeps the buffer of the last result reachable until the next call (ABI §2).
	lastResult []byte
)

//go:wasmexport wc_abi_version
func wcABIVersion() int32 { return wire.Version }

//go:wasmexport wc_alloc
func wcAlloc(size uint32) unsafe.Pointer {
	if size > wire.MaxResultLen {
		return nil // the ABI's "out of memory": the Go runtime would abort on a failed allocation
	}
	b := make([]byte, max(size, 1))
	p := unsafe.Pointer(unsafe.SliceData(b))
	allocs[uintptr(p)] = b
	return p
}

//go:wasmexport wc_free
func wcFree(ptr unsafe.Pointer, size uint32) {
	delete(allocs, uintptr(ptr))
}

//go:wasmexport wc_describe
func wcDescribe() uint64 {
	return result(defaultDispatcher.describe(), nil)
}

//go:wasmexport wc_call
func wcCall(handle int32, op int32, ptr unsafe.Pointer, n uint32) uint64 {
	var in []byte
	if n > 0 {
		in = unsafe.Slice((*byte)(ptr), n)
	}
	out, err := defaultDispatcher.handle(wire.Op(op), handle, in)
	r := result(out, err)
	if n > 0 || len(out) > 0 {
		yieldToGC()
	}
	return r
}

// yieldToGC lets the garbage collector's background workers run. A reactor module has one thread
// and its exports never block, so without a yield a GC cycle that starts during a call cannot finish:
// the guest stays in the mark phase for good and pays write barriers on every pointer store (POLL
// of the file source: 1.6-1.9 µs/record without, 0.7-0.9 with). A yield costs about 1 µs (the
// scheduler polls the host for events), so calls that carried no data, which allocate little,
// skip it.
func yieldToGC() { runtime.Gosched() }

func result(out []byte, err error) uint64 {
	var flags uint32
	if err != nil {
		out, flags = errorMessage(err), errorFlags(err)
	} else if len(out) > wire.MaxResultLen {
		out, flags = []byte("result too large for the ABI"), wire.ResultError
	}
	lastResult = out
	if len(out) == 0 {
		if flags != 0 {
			return wire.PackResult(0, 0, flags)
		}
		return 0
	}
	return wire.PackResult(uint32(uintptr(unsafe.Pointer(unsafe.SliceData(out)))), uint32(len(out)), flags)
}

//go:wasmimport wasmconnect log
func hostLog(level int32, ptr unsafe.Pointer, n uint32)

//go:wasmimport wasmconnect offset_get
func hostOffsetGet(part unsafe.Pointer, partLen uint32, out unsafe.Pointer, outCap uint32) int32

type wasmHost struct{}

var defaultHost host = wasmHost{}

func (wasmHost) log(level LogLevel, msg string) {
	b := []byte(msg)
	hostLog(int32(level), unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)))
}

func (wasmHost) offsetGet(partition []byte) ([]byte, bool, error) {
	buf := make([]byte, 256)
	for range 4 {
		n := hostOffsetGet(unsafe.Pointer(unsafe.SliceData(partition)), uint32(len(partition)),
			unsafe.Pointer(unsafe.SliceData(buf)), uint32(len(buf)))
		switch {
		case n == -1:
			return nil, false, nil
		case n < 0:
			return nil, false, errOffsetGet(n)
		case int(n) <= len(buf):
			return buf[:n], true, nil
		}
		buf = make([]byte, n)
	}
	return nil, false, errOffsetGet(-2)
}

type errOffsetGet int32

func (e errOffsetGet) Error() string {
	return "offset_get: the host returned " + itoa(int32(e))
}

func itoa(n int32) string {
	var b [12]byte
	i := len(b)
	neg := n < 0
	u := int64(n)
	if neg {
		u = -u
	}
	for {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
		if u == 0 {
			break
		}
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
