package main

import (
	"fmt"
	"time"
	"unsafe"
)

// The hostwait mode calls the ABI's network imports itself, as a guest without the Go SDK's
// cooperative waits would (a Rust or C guest), so that one read waits in the host for an hour.

//go:wasmimport wasmconnect net_dial
func rawDial(addr unsafe.Pointer, n uint32, timeoutNs int64) int32

//go:wasmimport wasmconnect net_read
func rawRead(h int32, p unsafe.Pointer, n uint32, waitNs int64) int32

func (t *task) hostWait() error {
	b := []byte(t.address)
	h := rawDial(unsafe.Pointer(unsafe.SliceData(b)), uint32(len(b)), 0)
	if h < 0 {
		return fmt.Errorf("net_dial %s returned %d", t.address, h)
	}
	buf := make([]byte, 512)
	n := rawRead(h, unsafe.Pointer(unsafe.SliceData(buf)), uint32(len(buf)), int64(time.Hour))
	return fmt.Errorf("netprobe: net_read returned %d", n)
}
