package main

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// statusEvery is how often the slot hears from the task without being asked, well inside the
// server's wal_sender_timeout (60 s by default).
const statusEvery = 10 * time.Second

// pollStream reads the replication stream for at most poll.interval.ms, or until max.batch.size
// events, or briefly once some have come and the stream pauses.
func (t *task) pollStream() ([]sdk.SourceRecord, error) {
	t.txn.lastAt = -1
	if len(t.out) > 0 {
		t.txn.lastAt = 0 // the held change
	}
	deadline := time.Now().Add(time.Duration(t.s.pollMs) * time.Millisecond)
	for len(t.out) < t.s.maxBatch {
		wait := time.Until(deadline)
		if len(t.out) > 0 {
			wait = min(wait, 10*time.Millisecond)
		}
		if wait <= 0 {
			break
		}
		msg, err := t.receive(wait)
		if err != nil {
			return nil, err
		}
		if msg == nil {
			break
		}
		if err := t.handle(msg); err != nil {
			return nil, err
		}
	}
	if time.Since(t.lastStatus) >= statusEvery {
		if err := t.sendStatus(); err != nil {
			return nil, err
		}
	}
	t.maybeHeartbeat()
	if t.txn.active && t.txn.lastAt >= 0 {
		// The open transaction's last change waits for its commit, which gives it the offset.
		t.held = append(t.held, t.out[t.txn.lastAt:]...)
		t.out = t.out[:t.txn.lastAt]
	}
	return t.out, nil
}

// receive returns the next CopyData message, or nil when none came within wait.
func (t *task) receive(wait time.Duration) (*pgproto3.CopyData, error) {
	nc := t.repl.Conn()
	nc.SetReadDeadline(time.Now().Add(wait))
	msg, err := t.repl.ReceiveMessage(context.Background())
	nc.SetReadDeadline(time.Time{})
	if err != nil {
		if pgconn.Timeout(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading replication slot %q from %s: %w", t.s.slot, t.where, err)
	}
	switch m := msg.(type) {
	case *pgproto3.CopyData:
		return m, nil
	case *pgproto3.ErrorResponse:
		pe := pgconn.ErrorResponseToPgError(m)
		if pe.Code == "55006" {
			return nil, slotError(pe, t.s.slot, t.where)
		}
		return nil, fmt.Errorf("replication slot %q on %s: %w", t.s.slot, t.where, pe)
	}
	return nil, nil
}

func (t *task) handle(cd *pgproto3.CopyData) error {
	if len(cd.Data) == 0 {
		return nil
	}
	switch cd.Data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(cd.Data[1:])
		if err != nil {
			return err
		}
		t.walEnd = max(t.walEnd, ka.ServerWALEnd)
		if ka.ReplyRequested {
			return t.sendStatus()
		}
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(cd.Data[1:])
		if err != nil {
			return err
		}
		return t.handleLogical(xld)
	}
	return nil
}

func (t *task) handleLogical(xld pglogrepl.XLogData) error {
	m, err := pglogrepl.Parse(xld.WALData)
	if err != nil {
		return fmt.Errorf("decoding pgoutput at LSN %s: %w", xld.WALStart, err)
	}
	switch m := m.(type) {
	case *pglogrepl.RelationMessage:
		t.relation(m)
	case *pglogrepl.BeginMessage:
		t.txn = txnState{active: true, xid: m.Xid, final: m.FinalLSN, commitTime: m.CommitTime, lastAt: -1,
			skip: m.FinalLSN <= t.skipCommit}
	case *pglogrepl.CommitMessage:
		if t.txn.lastAt >= 0 && !t.txn.skip {
			r := &t.out[len(t.out)-1]
			r.SourcePartition = t.partition()
			r.SourceOffset = map[string]any{"lsn": int64(t.txn.lastLSN), "lsn_proc": int64(t.txn.lastLSN),
				"lsn_commit": int64(m.CommitLSN), "txId": int64(t.txn.xid), "ts_usec": m.CommitTime.UnixMicro()}
			t.offsetPos = max(t.offsetPos, m.CommitLSN)
		}
		t.lastCommit = m.CommitLSN
		t.walEnd = max(t.walEnd, m.TransactionEndLSN)
		t.txn = txnState{lastAt: -1}
	case *pglogrepl.InsertMessage:
		return t.change(xld.WALStart, m.RelationID, 'c', 0, nil, m.Tuple)
	case *pglogrepl.UpdateMessage:
		return t.change(xld.WALStart, m.RelationID, 'u', m.OldTupleType, m.OldTuple, m.NewTuple)
	case *pglogrepl.DeleteMessage:
		return t.change(xld.WALStart, m.RelationID, 'd', m.OldTupleType, m.OldTuple, nil)
	}
	return nil
}

// relation maps a relation's columns by name to its captured table's; a relation whose columns
// changed (DDL) gets its table rebuilt from the message.
func (t *task) relation(m *pglogrepl.RelationMessage) {
	tb := t.byID[m.Namespace+"."+m.RelationName]
	if tb == nil {
		t.rels[m.RelationID] = &relation{}
		return
	}
	same := len(m.Columns) == len(tb.cols)
	for i, c := range m.Columns {
		same = same && c.Name == tb.cols[i].name && c.DataType == tb.cols[i].oid
	}
	if !same {
		cols := make([]column, len(m.Columns))
		var keyCols []int
		for i, c := range m.Columns {
			key := c.Flags&1 != 0 && tb.keySchema != nil
			cols[i] = newColumn(c.Name, c.DataType, c.TypeModifier, !key, key, t.s)
			if key {
				keyCols = append(keyCols, i)
			}
		}
		tb = newTable(t.s, tb.schema, tb.name, cols, keyCols)
		t.byID[tb.schema+"."+tb.name] = tb
		sdk.Logf(sdk.LevelInfo, "table %s changed: its event schemas now have %d column(s)", tb.quoted(), len(cols))
	}
	idx := make([]int, len(m.Columns))
	for i := range idx {
		idx[i] = i
	}
	t.rels[m.RelationID] = &relation{t: tb, idx: idx}
}

// tuple fills t.vals (and t.unch) in table column order from a pgoutput tuple.
func (t *task) tuple(rel *relation, td *pglogrepl.TupleData) {
	n := len(rel.t.cols)
	if cap(t.vals) < n {
		t.vals, t.unch = make([][]byte, n), make([]bool, n)
	}
	t.vals, t.unch = t.vals[:n], t.unch[:n]
	clear(t.vals)
	clear(t.unch)
	if td == nil {
		return
	}
	for i, c := range td.Columns {
		if i >= len(rel.idx) || rel.idx[i] < 0 {
			continue
		}
		switch c.DataType {
		case pglogrepl.TupleDataTypeText, pglogrepl.TupleDataTypeBinary:
			t.vals[rel.idx[i]] = c.Data
		case pglogrepl.TupleDataTypeToast:
			t.unch[rel.idx[i]] = true
		}
	}
}

// change appends the events of one row change: c, u or d (+ tombstone), or, for an update that
// changed the primary key, Debezium's d + tombstone + c.
func (t *task) change(lsn pglogrepl.LSN, relID uint32, op byte, oldType uint8, oldT, newT *pglogrepl.TupleData) error {
	if t.txn.skip {
		return nil
	}
	rel := t.rels[relID]
	if rel == nil {
		return fmt.Errorf("pgoutput sent a change of relation %d before its relation message", relID)
	}
	if rel.t == nil {
		return nil
	}
	tb := rel.t
	src := sourceInfo{ts: t.txn.commitTime, snapshot: "false", txID: int64(t.txn.xid), lsn: int64(lsn), lastCommit: int64(t.lastCommit)}
	now := time.Now()
	at := len(t.out)
	var before, after, oldKey, newKey []byte
	var err error
	if oldT != nil {
		t.tuple(rel, oldT)
		if before, err = t.appendRow(tb, t.vals, nil); err != nil {
			return err
		}
		if oldKey, err = t.appendKey(tb, t.vals); err != nil {
			return err
		}
	}
	if newT != nil {
		t.tuple(rel, newT)
		var unch []bool
		if op == 'u' {
			unch = t.unch
		}
		if after, err = t.appendRow(tb, t.vals, unch); err != nil {
			return err
		}
		if newKey, err = t.appendKey(tb, t.vals); err != nil {
			return err
		}
	}
	if op == 'u' && oldKey != nil && newKey != nil && !bytes.Equal(oldKey, newKey) {
		t.emit(tb, 'd', oldKey, before, nil, &src, now)
		t.emit(tb, 'c', newKey, nil, after, &src, now)
	} else {
		key := newKey
		if op == 'd' {
			key = oldKey
		}
		if op == 'u' && oldType != 'O' {
			before = nil
		}
		t.emit(tb, op, key, before, after, &src, now)
	}
	t.txn.lastAt, t.txn.lastLSN = at, lsn
	t.txn.changes++
	return nil
}

// emit appends an event, and the tombstone that follows a delete.
func (t *task) emit(tb *table, op byte, key, before, after []byte, src *sourceInfo, now time.Time) {
	start := len(t.arena)
	t.arena = tb.appendEnvelope(t.arena, t.s, op, before, after, src, now)
	t.out = append(t.out, t.record(tb, key, t.arena[start:len(t.arena):len(t.arena)]))
	if op == 'd' && t.s.tombstones {
		r := t.record(tb, key, nil)
		r.Value = sdk.Null()
		t.out = append(t.out, r)
	}
}

func (t *task) appendRow(tb *table, vals [][]byte, unch []bool) ([]byte, error) {
	start := len(t.arena)
	var err error
	if t.arena, err = tb.appendRow(t.arena, vals, unch); err != nil {
		return nil, err
	}
	return t.arena[start:len(t.arena):len(t.arena)], nil
}

func (t *task) appendKey(tb *table, vals [][]byte) ([]byte, error) {
	if tb.keySchema == nil {
		return nil, nil
	}
	start := len(t.arena)
	var err error
	if t.arena, err = tb.appendKey(t.arena, vals); err != nil {
		return nil, err
	}
	return t.arena[start:len(t.arena):len(t.arena)], nil
}

// maybeHeartbeat emits a heartbeat record carrying the stream's position when the interval has
// passed and no transaction is open: its offset lets the slot advance while the captured tables
// are idle. Like Debezium's, it beats every interval also when the server has sent nothing new
// (the offset is then the last one again), so that the heartbeat topic exists and shows the
// connector alive while the whole database is idle.
func (t *task) maybeHeartbeat() {
	if t.s.heartbeatMs <= 0 || t.txn.active || len(t.held) > 0 || time.Since(t.lastBeat) < time.Duration(t.s.heartbeatMs)*time.Millisecond {
		return
	}
	t.lastBeat = time.Now()
	t.offsetPos = max(t.offsetPos, t.walEnd)
	now := time.Now()
	key := fmt.Appendf(nil, `{"serverName":%q}`, t.s.server)
	value := fmt.Appendf(nil, `{"ts_ms":%d}`, now.UnixMilli())
	t.out = append(t.out, sdk.SourceRecord{Topic: t.s.heartbeatTopic,
		Key: sdk.JSON([]byte(heartbeatKeySchema), key), Value: sdk.JSON([]byte(heartbeatValueSchema), value),
		SourcePartition: t.partition(),
		SourceOffset: map[string]any{"lsn": int64(t.offsetPos), "lsn_proc": int64(t.offsetPos), "lsn_commit": int64(t.lastCommit),
			"ts_usec": now.UnixMicro()}})
}
