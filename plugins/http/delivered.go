package main

import "sort"

// deliveredSet holds the offsets of the records that reached the API and are not flushed yet, per
// topic partition, as sorted runs of consecutive offsets: a task delivers records mostly in offset
// order, so a partition usually needs one run however many records it holds.
//
// The worker puts records again after a PUT that failed: the whole batch once more and then one
// record at a time to find the ones the API rejects, or the whole batch after a retriable error.
// The records of the set are skipped then, each time, until a flush says that the worker has
// committed past them.
type deliveredSet map[topicPartition][]run

type topicPartition struct {
	topic     string
	partition int32
}

// run is the offsets lo..hi, both included.
type run struct{ lo, hi int64 }

func (d deliveredSet) add(tp topicPartition, offset int64) {
	rs := d[tp]
	if n := len(rs); n > 0 && rs[n-1].hi+1 == offset {
		rs[n-1].hi = offset
		return
	} else if n == 0 || rs[n-1].hi < offset {
		d[tp] = append(rs, run{offset, offset})
		return
	}
	i := sort.Search(len(rs), func(i int) bool { return rs[i].hi >= offset })
	if rs[i].lo <= offset {
		return // already there
	}
	switch {
	case rs[i].lo == offset+1 && i > 0 && rs[i-1].hi+1 == offset:
		rs[i-1].hi = rs[i].hi
		d[tp] = append(rs[:i], rs[i+1:]...)
	case rs[i].lo == offset+1:
		rs[i].lo = offset
	case i > 0 && rs[i-1].hi+1 == offset:
		rs[i-1].hi = offset
	default:
		rs = append(rs, run{})
		copy(rs[i+1:], rs[i:])
		rs[i] = run{offset, offset}
		d[tp] = rs
	}
}

func (d deliveredSet) has(tp topicPartition, offset int64) bool {
	rs := d[tp]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].hi >= offset })
	return i < len(rs) && rs[i].lo <= offset
}

// forgetBefore drops the offsets of tp below next.
func (d deliveredSet) forgetBefore(tp topicPartition, next int64) {
	rs := d[tp]
	i := sort.Search(len(rs), func(i int) bool { return rs[i].hi >= next })
	rs = rs[i:]
	if len(rs) > 0 && rs[0].lo < next {
		rs[0].lo = next
	}
	if len(rs) == 0 {
		delete(d, tp)
		return
	}
	d[tp] = rs
}
