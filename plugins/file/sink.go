package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

var sinkInfo = sdk.Info{
	Name:    "FileStreamSink",
	Class:   "org.apache.kafka.connect.file.FileStreamSinkConnector",
	Aliases: []string{"FileStreamSinkConnector"},
	Version: version,
	Config: []sdk.ConfigDef{
		{Name: fileConfig, Required: true, Importance: sdk.High,
			Documentation: "Destination filename. Required: writing to the standard output is not supported in the wasm sandbox."},
	},
}

const noStdoutError = "FileStreamSink requires \"file\": writing to the standard output is not supported in the wasm sandbox"

type fileSink struct{}

func (fileSink) Validate(cfg sdk.Config) map[string][]string {
	if v, ok := cfg[fileConfig]; ok && strings.TrimSpace(v) == "" {
		return map[string][]string{fileConfig: {noStdoutError}}
	}
	return nil
}

// TaskConfigs returns one task config, as Kafka's FileStreamSinkConnector does: several tasks
// appending to one file would interleave their lines.
func (fileSink) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	return []sdk.Config{cfg}, nil
}

func (fileSink) NewTask() sdk.SinkTask { return &sinkTask{} }

// sinkTask is FileStreamSinkTask. It writes whole lines only, so that a crash (kill -9, a full
// disk) never leaves a line cut in two that redelivered records would be appended to.
type sinkTask struct {
	filename string
	f        *os.File
	size     int64  // bytes of whole lines in the file
	pending  []byte // whole lines of the current put, not written yet
}

// sinkBufferSize bounds the lines of one put kept before they are written out, and the chunks in
// which a partial last line is looked for on start.
const sinkBufferSize = 64 << 10

func (t *sinkTask) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.filename = strings.TrimSpace(cfg[fileConfig])
	if t.filename == "" {
		return errors.New(noStdoutError)
	}
	f, err := ctx.OpenFile(t.filename, os.O_CREATE|os.O_APPEND|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("Couldn't find or create file '%s' for FileStreamSinkTask: %w", t.filename, err)
	}
	size, dropped, err := dropPartialLine(f)
	if err != nil {
		f.Close()
		return fmt.Errorf("FileStreamSinkTask: removing the partial last line of %s: %w", t.filename, err)
	}
	if dropped > 0 {
		ctx.Logf(sdk.LevelWarn, "removed a partial last line of %d bytes from %s, left by a write that was cut short; "+
			"the records it held are delivered again", dropped, t.filename)
	}
	t.f, t.size = f, size
	return nil
}

// dropPartialLine truncates f after its last newline, removing what a write cut short by a crash
// left behind. It returns the size of the file after that, and how many bytes it removed.
func dropPartialLine(f *os.File) (size, dropped int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	end := fi.Size()
	buf := make([]byte, 0, sinkBufferSize)
	keep := int64(0)
	for pos := end; pos > 0; {
		n := min(pos, int64(cap(buf)))
		pos -= n
		chunk := buf[:n]
		if _, err := f.ReadAt(chunk, pos); err != nil {
			return 0, 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			keep = pos + int64(i) + 1
			break
		}
	}
	if keep == end {
		return end, 0, nil
	}
	if err := f.Truncate(keep); err != nil {
		return 0, 0, err
	}
	return keep, end - keep, nil
}

// Put writes the text form of each value and a newline. As Kafka's FileStreamSinkTask, which prints
// each record, the lines are in the file when Put returns, so a reader sees them at once rather than
// at the next offset commit; they are written with one write call per put (and per 64 KiB) and
// synced at Flush.
func (t *sinkTask) Put(records []sdk.SinkRecord) error {
	for i := range records {
		n := len(t.pending)
		var err error
		if t.pending, err = sdk.AppendText(t.pending, records[i].Value); err != nil {
			t.pending = t.pending[:n]
			return fmt.Errorf("record %s-%d@%d: %w", records[i].Topic, records[i].Partition, records[i].Offset, err)
		}
		t.pending = append(t.pending, '\n')
		if len(t.pending) >= sinkBufferSize {
			if err := t.write(); err != nil {
				return err
			}
		}
	}
	return t.write()
}

// write writes the pending lines with one write call. If the write fails part way, the file is
// truncated back to its last whole line.
func (t *sinkTask) write() error {
	if len(t.pending) == 0 {
		return nil
	}
	n, err := t.f.Write(t.pending)
	t.pending = t.pending[:0]
	if err != nil {
		if n > 0 {
			t.f.Truncate(t.size)
		}
		return fmt.Errorf("writing %s: %w", t.filename, err)
	}
	t.size += int64(n)
	return nil
}

// Flush syncs the file, so that everything put so far is durable before its offsets are committed.
func (t *sinkTask) Flush([]sdk.TopicPartitionOffset) error {
	if err := t.write(); err != nil {
		return err
	}
	if err := t.f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", t.filename, err)
	}
	return nil
}

func (t *sinkTask) Stop() error {
	if t.f == nil {
		return nil
	}
	err := t.write()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	t.f = nil
	return err
}
