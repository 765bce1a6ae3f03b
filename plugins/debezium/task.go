package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// task streams one database's changes. Its phases: an optional snapshot (SELECT of every
// captured table inside the transaction exported by the slot's creation), then streaming from the
// slot. Offsets go with the last record of each transaction (and with heartbeats), so that a
// stored offset always names a whole transaction: a task that resumes skips the transactions it
// names and gets the rest again from the slot, whose confirmed position advances only to offsets
// the host says are stored (CommitOffsets).
type task struct {
	s     *settings
	where string
	conn  *pgx.Conn      // catalog queries and the snapshot
	repl  *pgconn.PgConn // the walsender connection
	byID  map[string]*table
	rels  map[uint32]*relation

	snap *snapshot // nil once streaming

	streaming  bool
	skipCommit pglogrepl.LSN // transactions committed at or before this were delivered before the restart
	txn        txnState
	lastCommit pglogrepl.LSN // commit LSN of the last transaction read
	walEnd     pglogrepl.LSN // how far the server has sent
	offsetPos  pglogrepl.LSN // position of the last offset handed out
	toConfirm  pglogrepl.LSN // the stored position, to confirm to the slot
	confirmed  pglogrepl.LSN
	lastStatus time.Time
	lastBeat   time.Time

	out   []sdk.SourceRecord
	held  []sdk.SourceRecord // the open transaction's last change, held back for its offset
	arena []byte
	vals  [][]byte
	unch  []bool
}

type txnState struct {
	active     bool
	skip       bool
	xid        uint32
	final      pglogrepl.LSN
	commitTime time.Time
	lastLSN    pglogrepl.LSN
	changes    int // captured changes so far
	lastAt     int // index in out of the last change's first record; -1 none in this poll
}

// relation maps a pgoutput relation's columns to a captured table's (nil table: not captured).
type relation struct {
	t   *table
	idx []int
}

var partitionKey = "server"

func (t *task) partition() map[string]any { return map[string]any{partitionKey: t.s.server} }

func (t *task) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	s, err := parseSettings(cfg)
	if err != nil {
		return err
	}
	t.s, t.where = s, where(cfg)
	t.rels = map[uint32]*relation{}
	bg := context.Background()
	pc, err := connConfig(cfg, false)
	if err != nil {
		return err
	}
	if t.conn, err = connect(bg, pc, t.where); err != nil {
		return err
	}
	if err := checkServer(bg, t.conn, cfg["database.user"], t.where); err != nil {
		return err
	}
	tables, err := loadTables(bg, t.conn, s)
	if err != nil {
		return err
	}
	t.byID = map[string]*table{}
	for _, tb := range tables {
		t.byID[tb.schema+"."+tb.name] = tb
	}
	if err := ensurePublication(bg, t.conn, s, tables); err != nil {
		return err
	}
	stored, hasOffset, err := ctx.Offset(t.partition())
	if err != nil {
		return fmt.Errorf("reading the stored offset of %v: %w", t.partition(), err)
	}
	incomplete := hasOffset && stored["snapshot"] != nil && stored["snapshot_completed"] != true
	doSnapshot := s.snapshotMode == "always" || (s.snapshotMode == "initial" && (!hasOffset || incomplete))

	rc, err := connConfig(cfg, true)
	if err != nil {
		return err
	}
	if t.repl, err = pgconn.ConnectConfig(bg, &rc.Config); err != nil {
		return replicationError(err, cfg["database.user"], t.where)
	}
	slot, err := t.slotState(bg)
	if err != nil {
		return err
	}
	if slot.active {
		return slotInUse(s.slot, slot.pid, t.where)
	}
	if doSnapshot {
		if slot.exists {
			sdk.Logf(sdk.LevelWarn, "dropping replication slot %q to take a consistent snapshot (snapshot.mode=%s, stored offset %v)", s.slot, s.snapshotMode, stored)
			if err := pglogrepl.DropReplicationSlot(bg, t.repl, s.slot, pglogrepl.DropReplicationSlotOptions{}); err != nil {
				return slotError(err, s.slot, t.where)
			}
		}
		res, err := pglogrepl.CreateReplicationSlot(bg, t.repl, s.slot, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "EXPORT_SNAPSHOT"})
		if err != nil {
			return slotError(err, s.slot, t.where)
		}
		cp, err := pglogrepl.ParseLSN(res.ConsistentPoint)
		if err != nil {
			return err
		}
		return t.beginSnapshot(bg, tables, res.SnapshotName, cp)
	}
	start := slot.confirmed
	if !slot.exists {
		res, err := pglogrepl.CreateReplicationSlot(bg, t.repl, s.slot, "pgoutput",
			pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: "NOEXPORT_SNAPSHOT"})
		if err != nil {
			return slotError(err, s.slot, t.where)
		}
		if start, err = pglogrepl.ParseLSN(res.ConsistentPoint); err != nil {
			return err
		}
		if hasOffset {
			sdk.Logf(sdk.LevelWarn, "replication slot %q was missing and is created anew: changes between the stored offset %v and now are not captured", s.slot, stored)
		}
	}
	if hasOffset {
		lsn, commit := lsnOf(stored["lsn"]), lsnOf(stored["lsn_commit"])
		t.skipCommit, t.lastCommit = commit, commit
		start = max(start, lsn, commit)
	}
	t.toConfirm, t.confirmed, t.offsetPos = start, start, start
	return t.startStreaming(bg, start)
}

func connect(ctx context.Context, pc *pgx.ConnConfig, where string) (*pgx.Conn, error) {
	cctx, cancel := context.WithTimeout(ctx, pc.ConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, pc)
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) && (pe.Code == "28P01" || pe.Code == "28000") {
			return nil, fmt.Errorf("PostgreSQL at %s rejected database.user %q (database.user and database.password): %s (SQLSTATE %s)", where, pc.User, pe.Message, pe.Code)
		}
		return nil, fmt.Errorf("cannot connect to PostgreSQL at %s (database.hostname, database.port, database.dbname): %w", where, err)
	}
	return conn, nil
}

// replicationError explains a refused replication connection.
func replicationError(err error, user, where string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42501" || pe.Code == "28000") {
		return fmt.Errorf("database.user %q has no replication permission on %s: %s (SQLSTATE %s); grant REPLICATION (ALTER ROLE %s REPLICATION) and allow it in pg_hba.conf",
			user, where, pe.Message, pe.Code, quoteIdent(user))
	}
	return fmt.Errorf("opening a replication connection to %s: %w", where, err)
}

func slotInUse(slot string, pid int32, where string) error {
	return fmt.Errorf("slot.name %q on %s is in use by another process (PID %d): another connector (or a client) streams from it; give this connector its own slot.name, or stop the other one (SELECT pg_terminate_backend(%d))",
		slot, where, pid, pid)
}

// slotError explains a failed slot command; an active slot is "in use".
func slotError(err error, slot, where string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "55006" {
		return fmt.Errorf("slot.name %q on %s is in use by another process: %s; give this connector its own slot.name, or stop the other one", slot, where, pe.Message)
	}
	return fmt.Errorf("replication slot %q on %s: %w", slot, where, err)
}

type slotInfo struct {
	exists, active bool
	pid            int32
	confirmed      pglogrepl.LSN
}

func (t *task) slotState(ctx context.Context) (slotInfo, error) {
	var si slotInfo
	var plugin, db string
	var pid *int32
	var confirmed *string
	err := t.conn.QueryRow(ctx, `SELECT plugin, database, active, active_pid, confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, t.s.slot).
		Scan(&plugin, &db, &si.active, &pid, &confirmed)
	if errors.Is(err, pgx.ErrNoRows) {
		return si, nil
	}
	if err != nil {
		return si, fmt.Errorf("reading replication slot %q: %w", t.s.slot, err)
	}
	si.exists = true
	if pid != nil {
		si.pid = *pid
	}
	if plugin != "pgoutput" || db != t.s.db {
		return si, fmt.Errorf("slot.name %q on %s belongs to database %q with plugin %q, not to database.dbname %q with pgoutput: choose another slot.name", t.s.slot, t.where, db, plugin, t.s.db)
	}
	if confirmed != nil {
		si.confirmed, err = pglogrepl.ParseLSN(*confirmed)
	}
	return si, err
}

func (t *task) startStreaming(ctx context.Context, start pglogrepl.LSN) error {
	err := pglogrepl.StartReplication(ctx, t.repl, t.s.slot, start, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names " + quoteLiteral(t.s.publication)}})
	if err != nil {
		return slotError(err, t.s.slot, t.where)
	}
	t.streaming, t.lastStatus, t.lastBeat = true, time.Now(), time.Now()
	return nil
}

func quoteLiteral(s string) string {
	b := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' {
			b = append(b, '\'')
		}
		b = append(b, s[i])
	}
	return string(append(b, '\''))
}

// lsnOf reads an LSN of a stored offset (an integer, as Debezium stores it).
func lsnOf(v any) pglogrepl.LSN {
	switch x := v.(type) {
	case int64:
		return pglogrepl.LSN(x)
	case float64:
		return pglogrepl.LSN(x)
	case json.Number:
		n, _ := strconv.ParseInt(string(x), 10, 64)
		return pglogrepl.LSN(n)
	}
	return 0
}

func (t *task) Poll() ([]sdk.SourceRecord, error) {
	t.out = append(t.out[:0], t.held...)
	t.held = t.held[:0]
	t.arena = make([]byte, 0, 64<<10)
	if t.snap != nil {
		return t.pollSnapshot()
	}
	return t.pollStream()
}

func (t *task) Commit() error { return nil }

// CommitOffsets confirms the stored position to the slot, so that PostgreSQL may recycle the WAL
// before it; never a position the host has not stored.
func (t *task) CommitOffsets(committed []sdk.CommittedOffset) error {
	for _, c := range committed {
		if c.Partition[partitionKey] != t.s.server {
			continue
		}
		if c.Offset["snapshot"] != nil && c.Offset["snapshot_completed"] != true {
			continue // a snapshot in progress: the slot stays at its consistent point
		}
		pos := max(lsnOf(c.Offset["lsn"]), lsnOf(c.Offset["lsn_commit"]))
		t.toConfirm = max(t.toConfirm, pos)
	}
	if t.streaming && t.toConfirm > t.confirmed {
		return t.sendStatus()
	}
	return nil
}

func (t *task) sendStatus() error {
	err := pglogrepl.SendStandbyStatusUpdate(context.Background(), t.repl, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: t.toConfirm, WALFlushPosition: t.toConfirm, WALApplyPosition: t.toConfirm})
	if err != nil {
		return fmt.Errorf("confirming LSN %s to replication slot %q: %w", t.toConfirm, t.s.slot, err)
	}
	t.confirmed, t.lastStatus = t.toConfirm, time.Now()
	return nil
}

func (t *task) Stop() error {
	ctx := context.Background()
	if t.snap != nil && t.snap.rows != nil {
		t.snap.rows.Close()
	}
	if t.repl != nil {
		t.repl.Close(ctx)
	}
	if t.conn != nil {
		t.conn.Close(ctx)
	}
	return nil
}
