//go:build wasip1

// Command goguest is the Go test guest of package fuel. The tests build it
// with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared
package main

import (
	"sort"
	"strconv"
	"unsafe"
)

func main() {}

// buffers keeps the memory handed to the host reachable.
var buffers = map[uint32][]byte{}

//go:wasmexport alloc
func alloc(size uint32) uint32 {
	b := make([]byte, size)
	ptr := uint32(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	buffers[ptr] = b
	return ptr
}

// upper upper-cases ASCII letters in place and returns how many it changed.
//
//go:wasmexport upper
func upper(ptr, n uint32) uint32 {
	b := buffers[ptr][:n]
	changed := uint32(0)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
			changed++
		}
	}
	return changed
}

//go:wasmexport fib
func fib(n uint32) uint64 {
	if n < 2 {
		return uint64(n)
	}
	return fib(n-1) + fib(n-2)
}

// work exercises the Go runtime: allocation, maps, sorting, strconv and a
// goroutine.
//
//go:wasmexport work
func work(n uint32) uint64 {
	counts := map[string]int{}
	for i := uint32(0); i < n; i++ {
		counts[strconv.Itoa(int(i*7919%(n/2+1)))]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := uint64(14695981039346656037)
	for _, k := range keys {
		for _, c := range []byte(k) {
			h = (h ^ uint64(c)) * 1099511628211
		}
		h ^= uint64(counts[k])
	}
	done := make(chan uint64)
	go func() { done <- h * 31 }()
	return <-done
}

//go:wasmexport spin
func spin() {
	for {
	}
}

//go:wasmexport boom
func boom() {
	var m map[string]int
	m["x"] = 1
}
