package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// snapshot reads the captured tables in the repeatable-read transaction that imported the slot's
// exported snapshot: exactly the rows committed before the slot's consistent point, from which
// streaming starts.
type snapshot struct {
	tx     pgx.Tx
	tables []*table
	next   int // the next table to query
	cur    *table
	rows   pgx.Rows
	cp     pglogrepl.LSN
	xid    int64
	start  time.Time
	count  int64
	// pending is the last row read, emitted when the next one is (so that the last of a table and
	// of the snapshot is marked so in source.snapshot).
	pending *pendingRow
}

type pendingRow struct {
	t          *table
	key, after []byte
	firstOfAll bool
	firstOfTab bool
}

func (t *task) beginSnapshot(ctx context.Context, tables []*table, name string, cp pglogrepl.LSN) error {
	tx, err := t.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return fmt.Errorf("beginning the snapshot transaction: %w", err)
	}
	if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT "+quoteLiteral(name), pgx.QueryExecModeSimpleProtocol); err != nil {
		tx.Rollback(ctx)
		return fmt.Errorf("importing the slot's snapshot %s: %w", name, err)
	}
	var xid int64
	if err := tx.QueryRow(ctx, "SELECT txid_snapshot_xmin(txid_current_snapshot())").Scan(&xid); err != nil {
		tx.Rollback(ctx)
		return fmt.Errorf("reading the snapshot's transaction id: %w", err)
	}
	t.snap = &snapshot{tx: tx, tables: tables, cp: cp, xid: xid, start: time.Now()}
	t.toConfirm, t.confirmed, t.offsetPos = cp, cp, cp
	sdk.Logf(sdk.LevelInfo, "snapshot of %d table(s) at LSN %s, then streaming from slot %q", len(tables), cp, t.s.slot)
	return nil
}

func (t *task) pollSnapshot() ([]sdk.SourceRecord, error) {
	sn := t.snap
	ctx := context.Background()
	for len(t.out) < t.s.maxBatch {
		if sn.rows == nil {
			if sn.next == len(sn.tables) {
				return t.finishSnapshot()
			}
			sn.cur = sn.tables[sn.next]
			sn.next++
			cols := make([]string, len(sn.cur.cols))
			for i, c := range sn.cur.cols {
				cols[i] = quoteIdent(c.name)
			}
			rows, err := sn.tx.Query(ctx, "SELECT "+strings.Join(cols, ",")+" FROM "+sn.cur.quoted(), pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				return nil, fmt.Errorf("snapshot of %s: %w", sn.cur.quoted(), err)
			}
			sn.rows = rows
		}
		if !sn.rows.Next() {
			sn.rows.Close()
			if err := sn.rows.Err(); err != nil {
				return nil, fmt.Errorf("snapshot of %s: %w", sn.cur.quoted(), err)
			}
			sn.rows = nil
			if sn.pending != nil && sn.pending.t == sn.cur && sn.next < len(sn.tables) {
				t.emitSnapshotRow(sn.pending, "last_in_data_collection")
				sn.pending = nil
			}
			continue
		}
		raw := sn.rows.RawValues()
		row := &pendingRow{t: sn.cur, firstOfAll: sn.count == 0, firstOfTab: sn.pending == nil || sn.pending.t != sn.cur}
		var err error
		start := len(t.arena)
		if t.arena, err = sn.cur.appendRow(t.arena, raw, nil); err != nil {
			return nil, err
		}
		row.after = t.arena[start:len(t.arena):len(t.arena)]
		if sn.cur.keySchema != nil {
			start = len(t.arena)
			if t.arena, err = sn.cur.appendKey(t.arena, raw); err != nil {
				return nil, err
			}
			row.key = t.arena[start:len(t.arena):len(t.arena)]
		}
		sn.count++
		if p := sn.pending; p != nil {
			marker := "true"
			switch {
			case p.firstOfAll:
				marker = "first"
			case p.firstOfTab:
				marker = "first_in_data_collection"
			}
			t.emitSnapshotRow(p, marker)
		}
		sn.pending = row
	}
	t.setSnapshotOffset(false)
	return t.out, nil
}

// emitSnapshotRow appends a read (op r) event.
func (t *task) emitSnapshotRow(p *pendingRow, marker string) {
	src := sourceInfo{ts: t.snap.start, snapshot: marker, txID: t.snap.xid, lsn: int64(t.snap.cp)}
	start := len(t.arena)
	t.arena = p.t.appendEnvelope(t.arena, t.s, 'r', nil, p.after, &src, time.Now())
	value := t.arena[start:len(t.arena):len(t.arena)]
	t.out = append(t.out, t.record(p.t, p.key, value))
}

// setSnapshotOffset puts the snapshot's offset on the last record of this poll.
func (t *task) setSnapshotOffset(last bool) {
	if len(t.out) == 0 {
		return
	}
	sn := t.snap
	r := &t.out[len(t.out)-1]
	r.SourcePartition = t.partition()
	r.SourceOffset = map[string]any{"lsn": int64(sn.cp), "txId": sn.xid, "ts_usec": sn.start.UnixMicro(),
		"snapshot": "INITIAL", "last_snapshot_record": last, "snapshot_completed": last}
}

// finishSnapshot emits the last row, ends the snapshot transaction and starts streaming from the
// slot's consistent point.
func (t *task) finishSnapshot() ([]sdk.SourceRecord, error) {
	sn := t.snap
	ctx := context.Background()
	if sn.pending != nil {
		t.emitSnapshotRow(sn.pending, "last")
		sn.pending = nil
	}
	t.setSnapshotOffset(true)
	if err := sn.tx.Rollback(ctx); err != nil {
		return nil, fmt.Errorf("ending the snapshot transaction: %w", err)
	}
	sdk.Logf(sdk.LevelInfo, "snapshot done: %d row(s) in %s; streaming from LSN %s", sn.count, time.Since(sn.start).Round(time.Millisecond), sn.cp)
	t.snap = nil
	if err := t.startStreaming(ctx, sn.cp); err != nil {
		return nil, err
	}
	return t.out, nil
}

// record is an event's source record: the key (nil: null) and value payloads with their schemas.
func (t *task) record(tb *table, key, value []byte) sdk.SourceRecord {
	r := sdk.SourceRecord{Topic: tb.topic, Value: sdk.JSON(tb.valueSchema, value)}
	if key != nil {
		r.Key = sdk.JSON(tb.keySchema, key)
	} else {
		r.Key = sdk.Null()
	}
	return r
}
