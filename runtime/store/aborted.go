package store

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// skipAborted moves the read position of every partition that is short of want past the batches
// a read_committed consumer is never handed: aborted transactional data and control batches.
//
// The consumer learns its position only from the records it is handed, and control records mark
// the end of an aborted transaction as a rule. But a broker that recovers from a crash (the
// embedded broker after SIGKILL) may abort the transactions that were open without writing their
// markers, and then nothing past their batches is ever handed to us: without this probe, reading
// such a topic to its end (GET /connectors/x/offsets, a task start) would wait forever.
func (l *Log) skipAborted(ctx context.Context, want map[int32]int64) {
	for p, end := range want {
		l.mu.Lock()
		from := l.next[p]
		l.mu.Unlock()
		if from >= end {
			continue
		}
		to, err := l.skippableUpTo(ctx, p, from, end)
		if err != nil {
			l.logger.Debug("probing for aborted batches", "partition", p, "offset", from, "err", err)
			continue
		}
		l.mu.Lock()
		moved := to > from && l.next[p] == from
		if moved {
			l.next[p] = to
			close(l.advanced)
			l.advanced = make(chan struct{})
		}
		l.mu.Unlock()
		if moved {
			l.logger.Debug("skipped batches of aborted transactions", "partition", p, "from", from, "to", to)
		}
	}
}

// skippableUpTo fetches partition p from offset from, as a read_committed consumer does, and
// returns the offset after the run of batches starting there that such a consumer skips: control
// batches and data of the transactions the broker lists as aborted. It returns from when the first
// batch is one the consumer is handed.
func (l *Log) skippableUpTo(ctx context.Context, p int32, from, end int64) (int64, error) {
	details, err := l.adm.ListTopics(ctx, l.Topic())
	if err != nil {
		return from, err
	}
	detail, ok := details[l.Topic()]
	if !ok || detail.Err != nil {
		return from, fmt.Errorf("topic metadata: %v", detail.Err)
	}
	part, ok := detail.Partitions[p]
	if !ok || part.Leader < 0 {
		return from, fmt.Errorf("no leader for partition %d", p)
	}

	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID = -1
	req.MaxBytes = 1 << 20
	req.IsolationLevel = 1 // read_committed
	t := kmsg.NewFetchRequestTopic()
	t.Topic, t.TopicID = l.Topic(), detail.ID
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, from, 1<<20
	t.Partitions = append(t.Partitions, rp)
	req.Topics = append(req.Topics, t)
	resp, err := req.RequestWith(ctx, l.cl.Broker(int(part.Leader)))
	if err != nil {
		return from, err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return from, fmt.Errorf("fetch answered %d topics", len(resp.Topics))
	}
	fp := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(fp.ErrorCode); err != nil {
		return from, err
	}
	aborted := make(map[int64]int64) // producer ID -> first offset of its aborted transaction
	for _, a := range fp.AbortedTransactions {
		if first, ok := aborted[a.ProducerID]; !ok || a.FirstOffset < first {
			aborted[a.ProducerID] = a.FirstOffset
		}
	}

	to := from
	for raw := fp.RecordBatches; len(raw) >= 12 && to < end; {
		n := 12 + int(int32(binary.BigEndian.Uint32(raw[8:12])))
		if n > len(raw) {
			break // a partial batch at the end of the response
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw[:n]); err != nil {
			return to, err
		}
		raw = raw[n:]
		last := b.FirstOffset + int64(b.LastOffsetDelta)
		if last < to {
			continue // before from: the broker answers from the start of a batch
		}
		control := b.Attributes&0x20 != 0
		transactional := b.Attributes&0x10 != 0
		first, wasAborted := aborted[b.ProducerID]
		if !control && !(transactional && wasAborted && first <= b.FirstOffset) {
			break // handed to the consumer, which moves the position itself
		}
		to = last + 1
	}
	return to, nil
}
