package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

const (
	fileConfig      = "file"
	topicConfig     = "topic"
	batchSizeConfig = "batch.size"
	filenameField   = "filename"
	positionField   = "position"
)

var sourceInfo = sdk.Info{
	Name:    "FileStreamSource",
	Class:   "org.apache.kafka.connect.file.FileStreamSourceConnector",
	Aliases: []string{"FileStreamSourceConnector"},
	Version: version,
	Config: []sdk.ConfigDef{
		{Name: fileConfig, Required: true, Importance: sdk.High,
			Documentation: "Source filename. Required: reading the standard input is not supported in the wasm sandbox."},
		{Name: topicConfig, Required: true, Importance: sdk.High, Documentation: "The topic to publish data to"},
		{Name: batchSizeConfig, Type: sdk.TypeInt, Default: new("2000"), Importance: sdk.Low,
			Documentation: "The maximum number of records the source task can read from the file each time it is polled"},
	},
}

type fileSource struct{}

func (fileSource) Validate(cfg sdk.Config) map[string][]string {
	errs := map[string][]string{}
	if v, ok := cfg[fileConfig]; ok && strings.TrimSpace(v) == "" {
		errs[fileConfig] = []string{noStdinError}
	}
	if v, ok := cfg[topicConfig]; ok {
		if strings.TrimSpace(v) == "" {
			errs[topicConfig] = []string{"Invalid value  for configuration topic: String must be non-empty"}
		} else if strings.Contains(v, ",") {
			errs[topicConfig] = []string{"'topic' in FileStreamSourceConnector configuration requires definition of a single topic"}
		}
	}
	if n, err := cfg.Int(batchSizeConfig, 2000); err == nil && n < 1 {
		errs[batchSizeConfig] = []string{fmt.Sprintf("Invalid value %d for configuration batch.size: Value must be at least 1", n)}
	}
	return errs
}

const noStdinError = "FileStreamSource requires \"file\": reading the standard input is not supported in the wasm sandbox"

// TaskConfigs returns one task config whatever maxTasks is: only one reader of a file makes sense.
func (fileSource) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	return []sdk.Config{cfg}, nil
}

func (fileSource) NewTask() sdk.SourceTask { return &sourceTask{} }

// sourceTask is FileStreamSourceTask.
type sourceTask struct {
	ctx       *sdk.TaskContext
	filename  string
	topic     string
	batchSize int
	partition map[string]any

	f             *os.File
	pos           int64  // file position of buf[0]: the position after the last line returned
	buf           []byte // bytes read but not yet returned (a partial line): a window into store
	store         []byte
	recs          []sdk.SourceRecord
	arena         []byte
	ends          []int
	loggedMissing bool
	now           func() time.Time
}

const readChunk = 64 << 10

func (t *sourceTask) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.ctx = ctx
	t.filename = strings.TrimSpace(cfg[fileConfig])
	if t.filename == "" {
		return errors.New(noStdinError)
	}
	t.topic = cfg[topicConfig]
	if strings.TrimSpace(t.topic) == "" {
		return errors.New(`FileStreamSource requires "topic"`)
	}
	var err error
	if t.batchSize, err = cfg.Int(batchSizeConfig, 2000); err != nil {
		return err
	}
	if t.batchSize < 1 {
		t.batchSize = 1
	}
	if t.now == nil {
		t.now = time.Now
	}
	t.partition = map[string]any{filenameField: t.filename}
	off, ok, err := ctx.Offset(t.partition)
	if err != nil {
		return fmt.Errorf("reading the stored offset of %s: %w", t.filename, err)
	}
	if ok {
		if t.pos, err = position(off[positionField]); err != nil {
			return err
		}
		ctx.Logf(sdk.LevelDebug, "Found previous offset, trying to skip to file offset %d", t.pos)
	}
	if err := t.open(); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func position(v any) (int64, error) {
	switch p := v.(type) {
	case int64:
		return p, nil
	case float64:
		if p == float64(int64(p)) {
			return int64(p), nil
		}
	case json.Number:
		return p.Int64()
	}
	return 0, errors.New("Offset position is the incorrect type")
}

// open opens the file and seeks to the stored position. A missing file is logged once.
func (t *sourceTask) open() error {
	f, err := t.ctx.OpenFile(t.filename, os.O_RDONLY, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !t.loggedMissing {
			t.loggedMissing = true
			t.ctx.Logf(sdk.LevelWarn, "Couldn't find file %s for FileStreamSourceTask, waiting for it to be created", t.filename)
		}
		return err
	}
	if t.pos > 0 {
		if fi, err := f.Stat(); err == nil && fi.Size() < t.pos {
			t.ctx.Logf(sdk.LevelWarn, "File %s is shorter (%d bytes) than the stored position %d; waiting for it to grow", t.filename, fi.Size(), t.pos)
		}
		if _, err := f.Seek(t.pos, io.SeekStart); err != nil {
			f.Close()
			return fmt.Errorf("seeking %s to %d: %w", t.filename, t.pos, err)
		}
	}
	t.f, t.loggedMissing = f, false
	t.ctx.Logf(sdk.LevelDebug, "Opened %s for reading", t.filename)
	return nil
}

// Poll returns up to batch.size complete lines, or none when there is nothing new. It never blocks.
func (t *sourceTask) Poll() ([]sdk.SourceRecord, error) {
	if t.f == nil {
		if err := t.open(); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, nil
			}
			return nil, err
		}
	}
	// The lines of this batch go into one arena, so that a batch costs few allocations; like the
	// records, it is reused by the next poll.
	arena, ends := t.arena[:0], t.ends[:0]
	defer func() { t.arena, t.ends = arena, ends }()
	eof := false
	for len(ends) < t.batchSize {
		line, rest, ok := cutLine(t.buf)
		if !ok {
			if eof {
				break
			}
			n, err := t.fill()
			if err != nil {
				return nil, err
			}
			eof = n == 0
			continue
		}
		arena = append(arena, line...)
		ends = append(ends, len(arena))
		t.pos += int64(len(t.buf) - len(rest))
		t.buf = rest
	}
	if len(ends) == 0 {
		return nil, nil
	}
	ts := t.now()
	// The SDK encodes a batch before it polls again, so the slice is reused.
	if cap(t.recs) < len(ends) {
		t.recs = make([]sdk.SourceRecord, len(ends))
	}
	recs := t.recs[:len(ends)]
	start := 0
	for i, end := range ends {
		recs[i] = sdk.SourceRecord{
			Topic:           t.topic,
			Value:           sdk.Data{Tag: sdk.TagString, Bytes: arena[start:end:end]},
			Timestamp:       ts,
			SourcePartition: t.partition,
		}
		start = end
	}
	// Only the last offset of a batch matters: the SDK sends just that one.
	recs[len(recs)-1].SourceOffset = map[string]any{positionField: t.pos}
	return recs, nil
}

// fill reads more of the file into buf and returns how many bytes it read (0 at the end of the file).
func (t *sourceTask) fill() (int, error) {
	if cap(t.buf)-len(t.buf) < readChunk/4 { // little room after the window: move it to the front
		if need := len(t.buf) + readChunk; cap(t.store) < need {
			t.store = make([]byte, 0, need)
		}
		n := copy(t.store[:cap(t.store)], t.buf)
		t.buf = t.store[:n]
	}
	n, err := t.f.Read(t.buf[len(t.buf):cap(t.buf)])
	t.buf = t.buf[:len(t.buf)+n]
	if err != nil && err != io.EOF {
		return n, fmt.Errorf("reading %s: %w", t.filename, err)
	}
	return n, nil
}

// cutLine splits the first line off b like FileStreamSourceTask.extractLine: a line ends at \n, \r
// or \r\n, and a \r at the end of b waits for the next byte.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	for i, c := range b {
		switch c {
		case '\n':
			return b[:i], b[i+1:], true
		case '\r':
			if i+1 >= len(b) {
				return nil, b, false
			}
			if b[i+1] == '\n' {
				return b[:i], b[i+2:], true
			}
			return b[:i], b[i+1:], true
		}
	}
	return nil, b, false
}

func (t *sourceTask) Commit() error { return nil }

func (t *sourceTask) Stop() error {
	if t.f == nil {
		return nil
	}
	err := t.f.Close()
	t.f = nil
	return err
}
