package main

import (
	"bufio"
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

// sinkTask is FileStreamSinkTask.
type sinkTask struct {
	filename string
	f        *os.File
	w        *bufio.Writer
	line     []byte
}

func (t *sinkTask) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.filename = strings.TrimSpace(cfg[fileConfig])
	if t.filename == "" {
		return errors.New(noStdoutError)
	}
	f, err := ctx.OpenFile(t.filename, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("Couldn't find or create file '%s' for FileStreamSinkTask: %w", t.filename, err)
	}
	t.f, t.w = f, bufio.NewWriterSize(f, 64<<10)
	return nil
}

// Put writes the text form of each value and a newline.
func (t *sinkTask) Put(records []sdk.SinkRecord) error {
	for i := range records {
		var err error
		if t.line, err = sdk.AppendText(t.line[:0], records[i].Value); err != nil {
			return fmt.Errorf("record %s-%d@%d: %w", records[i].Topic, records[i].Partition, records[i].Offset, err)
		}
		t.line = append(t.line, '\n')
		if _, err := t.w.Write(t.line); err != nil {
			return fmt.Errorf("writing %s: %w", t.filename, err)
		}
	}
	return nil
}

// Flush writes buffered lines and syncs the file, so that everything put so far is durable.
func (t *sinkTask) Flush([]sdk.TopicPartitionOffset) error {
	if err := t.w.Flush(); err != nil {
		return fmt.Errorf("flushing %s: %w", t.filename, err)
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
	err := t.w.Flush()
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	t.f = nil
	return err
}
