package wasmhost

import (
	"github.com/tetratelabs/wazero/experimental"
)

// exactMemoryUpTo is the size up to which a guest's linear memory is backed by exactly what it
// has grown to. Above it, each growth leaves an eighth of headroom, so that a guest that grows a
// page at a time to hundreds of megabytes is not copied on every page.
const exactMemoryUpTo = 8 << 20

// memoryAllocator backs the guests' linear memories with Go slices of the size they grow to.
// Without it wazero grows a memory with append, whose capacity runs up to a quarter past the
// length: memory the guest cannot use and a worker holds for as long as the instance lives,
// since WebAssembly memory never shrinks (after a burst, ~0.3 MB over a source task's two
// instances). Growing exactly costs a copy of the memory on each memory.grow, which small
// memories grow a handful of times in their life and the data plane's steady state never.
var memoryAllocator experimental.MemoryAllocator = experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
	return &linearMemory{max: max}
})

type linearMemory struct {
	buf []byte
	max uint64
}

// Reallocate implements experimental.LinearMemory: buf grown to size bytes, the new ones zero.
func (m *linearMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		// Memory never shrinks: the bytes past the old length were never the guest's, still zero.
		m.buf = m.buf[:size]
		return m.buf
	}
	c := size
	if size > exactMemoryUpTo {
		c = min(size+size/8, m.max)
	}
	b := make([]byte, size, c)
	copy(b, m.buf)
	m.buf = b
	return b
}

// Free implements experimental.LinearMemory.
func (m *linearMemory) Free() { m.buf = nil }
