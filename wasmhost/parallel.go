package wasmhost

import (
	"runtime"
	"sync"
)

// parallel calls fn(0), ..., fn(n-1) on at most GOMAXPROCS goroutines at a time and returns when
// every call has: loading and compiling modules is CPU-bound, so more would only queue.
func parallel(n int, fn func(i int)) {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			fn(i)
		}()
	}
	wg.Wait()
}
