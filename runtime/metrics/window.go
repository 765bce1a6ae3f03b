package metrics

import (
	"sync"
	"sync/atomic"
	"time"
)

// Kafka's metrics library computes averages, maxima, frequencies and rates over a sliding window of
// metrics.num.samples (2) samples of metrics.sample.window.ms (30 s) each. The series below keep
// that meaning, so that a dashboard's thresholds for Kafka Connect hold here too.
const (
	sampleWindow = 30 * time.Second
	numSamples   = 2
)

// now is the clock of the windowed statistics; tests replace it.
var now = time.Now

// windowed is Kafka's SampledStat: values recorded into the current sample, samples older than
// numSamples windows forgotten. It serves Avg, Max and Frequencies (the avg of 0/1 values). It is
// recorded once per batch or commit, never per record, so a mutex is cheap enough.
type windowed struct {
	mu      sync.Mutex
	samples [numSamples]sample
	cur     int
}

type sample struct {
	start time.Time
	count int64
	sum   float64
	max   float64
}

func (w *windowed) record(v float64) {
	t := now()
	w.mu.Lock()
	s := &w.samples[w.cur]
	if s.start.IsZero() || t.Sub(s.start) >= sampleWindow {
		w.cur = (w.cur + 1) % numSamples
		s = &w.samples[w.cur]
		*s = sample{start: t, max: v}
	}
	s.count++
	s.sum += v
	s.max = max(s.max, v)
	w.mu.Unlock()
}

// stats returns the count, sum and max of the samples still in the window.
func (w *windowed) stats() (count int64, sum, maxV float64) {
	t := now()
	w.mu.Lock()
	defer w.mu.Unlock()
	first := true
	for _, s := range w.samples {
		if s.start.IsZero() || t.Sub(s.start) >= numSamples*sampleWindow {
			continue
		}
		count += s.count
		sum += s.sum
		if first || s.max > maxV {
			maxV, first = s.max, false
		}
	}
	return count, sum, maxV
}

// avg is the window's average, 0 when nothing was recorded in it (Kafka reports NaN, which most
// dashboards draw as a gap and alerting rules trip over).
func (w *windowed) avg() float64 {
	n, sum, _ := w.stats()
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// max is the window's maximum, 0 when nothing was recorded in it.
func (w *windowed) max() float64 {
	_, _, m := w.stats()
	return m
}

// rate is Kafka's Rate over a counter, computed from snapshots of it rather than recorded per event:
// the counters it reads are bumped per record, where a lock would cost more than the record. A
// snapshot is taken when the rate is read and the newest is a window old, so the rate covers the
// last one to two windows; before the first window has passed it covers the time since the series
// was created.
type rate struct {
	total func() float64

	mu    sync.Mutex
	snaps [numSamples]snapshot // oldest first
}

type snapshot struct {
	at time.Time
	v  float64
}

func newRate(total func() float64) *rate {
	r := &rate{total: total}
	t := now()
	for i := range r.snaps {
		r.snaps[i] = snapshot{at: t, v: total()}
	}
	return r
}

// perSecond returns the events per second since the oldest snapshot.
func (r *rate) perSecond() float64 {
	t, v := now(), r.total()
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.Sub(r.snaps[numSamples-1].at) >= sampleWindow {
		copy(r.snaps[:], r.snaps[1:])
		r.snaps[numSamples-1] = snapshot{at: t, v: v}
	}
	old := r.snaps[0]
	elapsed := t.Sub(old.at).Seconds()
	if elapsed < 1 {
		elapsed = 1 // a rate over less than a second is noise
	}
	return (v - old.v) / elapsed
}

// ratioTracker is Kafka's task StateTracker: the share of time since the task started that it
// spent in each state (running-ratio, pause-ratio). It is told of state changes only.
type ratioTracker struct {
	mu      sync.Mutex
	started time.Time
	since   time.Time
	state   int32
	spent   map[int32]time.Duration
}

func newRatioTracker(state int32) *ratioTracker {
	t := now()
	return &ratioTracker{started: t, since: t, state: state, spent: map[int32]time.Duration{}}
}

func (r *ratioTracker) set(state int32) {
	t := now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if state == r.state {
		return
	}
	r.spent[r.state] += t.Sub(r.since)
	r.state, r.since = state, t
}

func (r *ratioTracker) ratio(state int32) float64 {
	t := now()
	r.mu.Lock()
	defer r.mu.Unlock()
	total := t.Sub(r.started)
	if total <= 0 {
		if state == r.state {
			return 1
		}
		return 0
	}
	in := r.spent[state]
	if state == r.state {
		in += t.Sub(r.since)
	}
	return float64(in) / float64(total)
}

// level is a gauge that also keeps the window's average and maximum of the values it took (Kafka's
// source-record-active-count, -avg and -max). Add is an atomic add; the window is fed by Sample,
// which the task calls once per batch.
type level struct {
	v atomic.Int64
	w windowed
}

func (l *level) add(n int64) { l.v.Add(n) }

func (l *level) sample() { l.w.record(float64(l.v.Load())) }
