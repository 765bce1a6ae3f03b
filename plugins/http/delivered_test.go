package main

import (
	"math/rand/v2"
	"testing"
)

// TestDeliveredSet checks the runs against a plain set, with offsets added in order, in reverse
// and at random, and forgotten below flushed offsets.
func TestDeliveredSet(t *testing.T) {
	tp := topicPartition{"t", 0}
	for _, order := range []string{"ascending", "descending", "random"} {
		d, want := deliveredSet{}, map[int64]bool{}
		offsets := rand.Perm(500)
		for i := range offsets {
			switch order {
			case "ascending":
				offsets[i] = i
			case "descending":
				offsets[i] = 499 - i
			}
		}
		for _, o := range offsets {
			if o%7 == 3 {
				continue // gaps
			}
			d.add(tp, int64(o))
			d.add(tp, int64(o)) // twice is once
			want[int64(o)] = true
		}
		check := func(from int64) {
			t.Helper()
			for o := int64(-1); o < 501; o++ {
				if got := d.has(tp, o); got != (want[o] && o >= from) {
					t.Fatalf("%s: has(%d) = %v", order, o, got)
				}
			}
		}
		check(0)
		if n := len(d[tp]); n != 72 {
			t.Errorf("%s: %d runs, want 72 (one per gap)", order, n)
		}
		d.forgetBefore(tp, 250)
		check(250)
		d.forgetBefore(tp, 1000)
		if _, ok := d[tp]; ok || d.has(tp, 499) {
			t.Errorf("%s: not forgotten: %v", order, d[tp])
		}
	}
}
