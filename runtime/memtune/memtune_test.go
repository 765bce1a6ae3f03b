package memtune

import "testing"

func TestDetectorEndsEachBurstOnce(t *testing.T) {
	const mb = 1 << 20
	d := Detector{Busy: 64 * mb, Quiet: 4 * mb}
	// Cumulative readings: idle, a burst over two readings, a slowing reading, quiet ones, idle
	// again with no burst, then a second burst.
	steps := []struct {
		delta uint64
		want  bool
	}{
		{0, false}, // the first reading only sets the base
		{1 * mb, false},
		{100 * mb, false},
		{200 * mb, false},
		{10 * mb, false}, // slowing down, not yet quiet
		{1 * mb, true},   // the burst has ended
		{1 * mb, false},  // once per burst
		{3 * mb, false},  // quiet without a burst before it
		{64 * mb, false},
		{0, true},
	}
	total := uint64(500 * mb)
	for i, s := range steps {
		total += s.delta
		if got := d.Observe(total); got != s.want {
			t.Errorf("reading %d (+%d MB): got %v, want %v", i, s.delta/mb, got, s.want)
		}
	}
}
