package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

func init() {
	sdk.RegisterSource(sdk.Info{
		Name:    "NetProbe",
		Class:   "wasmconnect.testing.NetProbeSource",
		Version: "1.0.0",
		Config: []sdk.ConfigDef{
			{Name: "mode", Default: new("echo"), Importance: sdk.High, Validator: sdk.OneOf("echo", "hold", "hostwait"),
				Documentation: "echo, hold or hostwait."},
			{Name: "address", Default: new(""), Importance: sdk.High, Documentation: "host:port to dial (echo, hold)."},
			{Name: "topic", Default: new("netprobe"), Importance: sdk.Medium, Documentation: "The topic of the records."},
			{Name: "poll.interval.ms", Type: sdk.TypeInt, Default: new("0"), Importance: sdk.Low,
				Documentation: "Minimum time between probes; polls in between return nothing."},
		},
	}, connector{})
}

func main() {}

type connector struct{}

func (connector) Validate(sdk.Config) map[string][]string { return nil }

func (connector) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	return []sdk.Config{cfg}, nil
}

func (connector) NewTask() sdk.SourceTask { return &task{} }

type task struct {
	ctx                  *sdk.TaskContext
	mode, address, topic string
	polls                int
	interval             time.Duration
	last                 time.Time
}

func (t *task) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.ctx, t.mode, t.address, t.topic = ctx, cfg["mode"], cfg["address"], cfg["topic"]
	ms, err := cfg.Int("poll.interval.ms", 0)
	if err != nil {
		return err
	}
	t.interval = time.Duration(ms) * time.Millisecond
	return nil
}

func (t *task) Poll() ([]sdk.SourceRecord, error) {
	if t.interval > 0 && time.Since(t.last) < t.interval {
		return nil, nil
	}
	t.last = time.Now()
	t.polls++
	var value string
	var err error
	switch t.mode {
	case "echo":
		value, err = t.echo()
	case "hold":
		err = t.hold()
	case "hostwait":
		err = t.hostWait()
	}
	if err != nil {
		return nil, err
	}
	return []sdk.SourceRecord{{Topic: t.topic, Value: sdk.String(value), Timestamp: time.Now()}}, nil
}

func (t *task) echo() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := sdk.Dial(ctx, "tcp", t.address)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := fmt.Fprintf(c, "ping %d\n", t.polls); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("reading the echo: %w", err)
	}
	return line[:len(line)-1], nil
}

func (t *task) hold() error {
	c, err := sdk.Dial(context.Background(), "tcp", t.address)
	if err != nil {
		return err
	}
	defer c.Close()
	t.ctx.Logf(sdk.LevelInfo, "netprobe: connected to %s, reading until it ends", t.address)
	_, err = io.Copy(io.Discard, c)
	return fmt.Errorf("netprobe: the connection to %s ended (%v)", t.address, err)
}

func (t *task) Commit() error { return nil }
func (t *task) Stop() error   { return nil }
