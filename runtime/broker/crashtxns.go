package broker

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// openTxn is a transaction a killed broker left open on one partition: its producer wrote
// transactional batches there after its last control batch.
type openTxn struct {
	topic     string
	partition int32
	producer  int64
	epoch     int16
}

// openTransactions lists the transactions left open in dataDir by a broker that did not stop
// cleanly, nil for one that did (or a new data dir).
//
// kfake, reloading a data dir after a crash, treats every transaction that was open as aborted
// (its records never become visible to read_committed readers) but writes no abort marker. A
// read_committed consumer is then told that the producer's transaction starting at the first
// aborted offset was aborted and drops that producer's transactional batches until it meets the
// producer's abort marker, which never comes: when the producer (the same transactional.id gets the
// same producer id back) commits a new transaction on that partition after the restart, a reader
// whose fetch spans both, such as a worker reading its offsets topic from the start, silently loses
// the committed records, and reading "to the end" waits on offsets it is never handed. Start writes
// the missing markers (see abortOpenTransactions) before clients connect.
//
// kfake saves session_state.json when it stops cleanly and removes it when it loads it: without it,
// the previous broker was killed. It relies on kfake's layout: partitions/<escaped topic>-<n>/
// <base offset>.dat, each a run of Kafka record batches in their wire format.
func openTransactions(dataDir string) ([]openTxn, error) {
	if _, err := os.Stat(filepath.Join(dataDir, "session_state.json")); err == nil {
		return nil, nil // stopped cleanly: kfake restores the open transactions, which go on
	}
	dir := filepath.Join(dataDir, "partitions")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var open []openTxn
	for _, e := range entries {
		topic, p, ok := parsePartitionDir(e.Name())
		if !e.IsDir() || !ok {
			continue
		}
		txns, err := openInPartition(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("reading partition %d of topic %q: %w", p, topic, err)
		}
		for _, t := range txns {
			t.topic, t.partition = topic, int32(p)
			open = append(open, t)
		}
	}
	return open, nil
}

// openInPartition scans a partition directory's segments in offset order and returns the producers
// whose last batch is transactional data rather than a control batch.
func openInPartition(dir string) ([]openTxn, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type segment struct {
		file string
		base int64
	}
	var segments []segment // <base offset>.dat
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".dat"); ok {
			if base, err := strconv.ParseInt(name, 10, 64); err == nil {
				segments = append(segments, segment{e.Name(), base})
			}
		}
	}
	slices.SortFunc(segments, func(a, b segment) int { return cmp.Compare(a.base, b.base) })
	open := map[int64]int16{} // producer ID -> epoch of its open transaction
	for _, seg := range segments {
		raw, err := os.ReadFile(filepath.Join(dir, seg.file))
		if err != nil {
			return nil, err
		}
		for len(raw) >= 12 {
			n := 12 + int(int32(binary.BigEndian.Uint32(raw[8:12])))
			if n < 12 || n > len(raw) {
				break // a batch cut short by the kill: kfake drops it as well
			}
			var b kmsg.RecordBatch
			if err := b.ReadFrom(raw[:n]); err != nil {
				break
			}
			raw = raw[n:]
			switch {
			case b.Attributes&0x20 != 0: // control: the transaction's marker
				delete(open, b.ProducerID)
			case b.Attributes&0x10 != 0: // transactional data
				open[b.ProducerID] = b.ProducerEpoch
			}
		}
	}
	var txns []openTxn
	for pid, epoch := range open {
		txns = append(txns, openTxn{producer: pid, epoch: epoch})
	}
	return txns, nil
}

// abortOpenTransactions writes an abort marker for each of txns through the broker at addr, as
// Kafka's transaction coordinator does for a transaction it aborts, so that read_committed readers
// stop dropping the producer's batches there (see openTransactions).
func abortOpenTransactions(ctx context.Context, addr string, client []kgo.Opt, txns []openTxn, log *slog.Logger) error {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, client...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	for _, t := range txns {
		m := kmsg.NewWriteTxnMarkersRequestMarker()
		m.ProducerID, m.ProducerEpoch, m.Committed = t.producer, t.epoch, false
		mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
		mt.Topic, mt.Partitions = t.topic, []int32{t.partition}
		m.Topics = append(m.Topics, mt)
		req.Markers = append(req.Markers, m)
	}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	var errs []error
	for _, m := range resp.Markers {
		for _, mt := range m.Topics {
			for _, p := range mt.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					errs = append(errs, fmt.Errorf("abort marker of producer %d on %s/%d: %w", m.ProducerID, mt.Topic, p.Partition, err))
					continue
				}
				log.Info("embedded broker: wrote the abort marker of a transaction the killed broker left open",
					"topic", mt.Topic, "partition", p.Partition, "producer_id", m.ProducerID)
			}
		}
	}
	return errors.Join(errs...)
}

// endOpenTransactions writes the abort markers of the transactions a killed broker left open in
// dataDir (see openTransactions) through a broker of its own on a free loopback port, started with
// opts and stopped cleanly before Start opens the data dir to clients: a producer of such a
// transaction must not write again on its partition before the marker. Only a data dir that needs
// markers is loaded twice.
func endOpenTransactions(dataDir string, opts []kfake.Opt, client []kgo.Opt, log *slog.Logger) error {
	txns, err := openTransactions(dataDir)
	if err != nil || len(txns) == 0 {
		return err
	}
	c, err := kfake.NewCluster(append(slices.Clip(opts), kfake.Ports(0))...)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), startupTimeout)
	defer cancel()
	err = abortOpenTransactions(ctx, c.ListenAddrs()[0], client, txns, log)
	c.Close()
	return errors.Join(err, forgetSASL(dataDir))
}
