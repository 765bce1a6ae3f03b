package wasmhost

import (
	"bytes"
	"testing"
)

func TestLinearMemoryGrowsExactlyThenWithHeadroom(t *testing.T) {
	const page = 64 << 10
	m := memoryAllocator.Allocate(0, 1<<30)
	b := m.Reallocate(2 * page)
	if len(b) != 2*page || cap(b) != 2*page {
		t.Fatalf("initial memory: len %d cap %d, want both %d", len(b), cap(b), 2*page)
	}
	copy(b, "guest data")
	b = m.Reallocate(5 * page)
	if len(b) != 5*page || cap(b) != 5*page {
		t.Fatalf("small memory grown: len %d cap %d, want both %d", len(b), cap(b), 5*page)
	}
	if !bytes.HasPrefix(b, []byte("guest data")) || bytes.ContainsFunc(b[len("guest data"):], func(r rune) bool { return r != 0 }) {
		t.Fatal("growing lost the contents or gave non-zero new bytes")
	}
	big := uint64(exactMemoryUpTo + 8*page)
	b = m.Reallocate(big)
	if uint64(len(b)) != big || uint64(cap(b)) != big+big/8 {
		t.Fatalf("large memory grown: len %d cap %d, want %d and %d", len(b), cap(b), big, big+big/8)
	}
	b = m.Reallocate(big + page) // within the headroom: the same backing array
	if uint64(len(b)) != big+page || uint64(cap(b)) != big+big/8 {
		t.Fatalf("grown within headroom: len %d cap %d", len(b), cap(b))
	}
	if m.Reallocate(1<<30+page) != nil {
		t.Fatal("grown past the maximum")
	}
	m.Free()
}
