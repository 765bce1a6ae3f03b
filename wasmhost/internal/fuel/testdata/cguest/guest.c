// The C test guest of package fuel. guest.wasm and guest-simd.wasm are built
// from it (Debian: apt-get install clang lld wasi-libc libclang-rt-14-dev-wasm32):
//
//	clang --target=wasm32-wasi -O2 -mexec-model=reactor -o guest.wasm guest.c
//	clang --target=wasm32-wasi -O3 -msimd128 -c -o guest.o guest.c
//	clang --target=wasm32-wasi -mexec-model=reactor -o guest-simd.wasm guest.o
//
// Both keep their name section, which the tests use.
#include <stdint.h>
#include <stdlib.h>

#define EXPORT(name) __attribute__((export_name(#name)))

EXPORT(alloc) void *alloc(uint32_t n) { return malloc(n); }

// upper upper-cases ASCII letters in place and returns how many it changed.
EXPORT(upper) uint32_t upper(uint8_t *p, uint32_t n) {
	uint32_t changed = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		uint8_t is = (uint8_t)(c - 'a') < 26;
		p[i] = c - (is << 5);
		changed += is;
	}
	return changed;
}

EXPORT(fib) uint64_t fib(uint32_t n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static int cmp(const void *a, const void *b) {
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

// work sorts pseudo-random numbers with qsort (calls through a function
// pointer: call_indirect) and hashes them.
EXPORT(work) uint64_t work(uint32_t n) {
	uint32_t *v = malloc(n * sizeof *v);
	uint32_t x = 2463534242u;
	for (uint32_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		v[i] = x;
	}
	qsort(v, n, sizeof *v, cmp);
	uint64_t h = 14695981039346656037ull;
	for (uint32_t i = 0; i < n; i++) h = (h ^ v[i]) * 1099511628211ull;
	free(v);
	return h;
}

static volatile uint32_t spins;

EXPORT(spin) void spin(void) {
	for (;;) spins++;
}

EXPORT(boom) void boom(void) { __builtin_trap(); }
