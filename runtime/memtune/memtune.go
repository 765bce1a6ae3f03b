// Package memtune gives the memory of a burst of work back once the process goes quiet.
//
// Go collects garbage when the heap has grown by GOGC percent since the last collection, so a
// worker that moved a million records and then idles keeps the heap of its last collection plus
// whatever it allocated since, until the runtime's forced collection minutes later, and returns
// freed pages to the OS only gradually. Watch notices the end of a burst (an interval with a lot
// allocated followed by a quiet one) and collects and returns the memory then, once per burst: a
// full collection costs a few milliseconds, which an idle worker can spare.
package memtune

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Defaults for Watch: a burst allocates at least Busy bytes within an Interval, and it has ended
// when an Interval allocates under Quiet bytes (an idle worker with a hundred idle tasks allocates
// far less).
const (
	Interval = time.Second
	Busy     = 64 << 20
	Quiet    = 4 << 20
)

// Watch samples the bytes the process has allocated every Interval until ctx is done, and calls
// debug.FreeOSMemory (a full collection, then every free page back to the OS) once after each
// burst.
func Watch(ctx context.Context) {
	t := time.NewTicker(Interval)
	defer t.Stop()
	d := Detector{Busy: Busy, Quiet: Quiet}
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if d.Observe(sample[0].Value.Uint64()) {
			debug.FreeOSMemory()
		}
	}
}

// Detector finds the ends of bursts in successive readings of a cumulative allocation counter.
type Detector struct {
	Busy, Quiet uint64 // bytes per reading: a burst allocates at least Busy, a quiet reading under Quiet

	last  uint64
	seen  bool // last holds a reading
	burst bool // a burst has been seen and not yet ended
}

// Observe takes the next reading of the counter and reports whether it ends a burst: a reading
// under Quiet bytes after one or more of at least Busy (with any in between).
func (d *Detector) Observe(total uint64) bool {
	delta := total - d.last
	first := !d.seen
	d.last, d.seen = total, true
	if first {
		return false
	}
	switch {
	case delta >= d.Busy:
		d.burst = true
	case delta < d.Quiet && d.burst:
		d.burst = false
		return true
	}
	return false
}
