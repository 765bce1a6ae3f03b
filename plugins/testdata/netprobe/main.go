package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

func init() {
	sdk.RegisterSource(sdk.Info{
		Name:    "NetProbe",
		Class:   "wasmconnect.testing.NetProbeSource",
		Version: "1.0.0",
		Config: []sdk.ConfigDef{
			{Name: "mode", Default: new("echo"), Importance: sdk.High, Validator: sdk.OneOf("echo", "hold", "hostwait", "http"),
				Documentation: "echo, hold, hostwait or http."},
			{Name: "address", Default: new(""), Importance: sdk.High, Documentation: "host:port to dial (echo, hold)."},
			{Name: "url", Default: new(""), Importance: sdk.High, Documentation: "URL to GET (http)."},
			{Name: "tls.ca", Default: new(""), Importance: sdk.Low, Documentation: "PEM certificate to trust for https."},
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
	ctx                       *sdk.TaskContext
	mode, address, url, topic string
	client                    *http.Client
	polls                     int
	interval                  time.Duration
	last                      time.Time
}

func (t *task) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.ctx, t.mode, t.address, t.url, t.topic = ctx, cfg["mode"], cfg["address"], cfg["url"], cfg["topic"]
	ms, err := cfg.Int("poll.interval.ms", 0)
	if err != nil {
		return err
	}
	t.interval = time.Duration(ms) * time.Millisecond
	tr := &http.Transport{DialContext: sdk.Dial, MaxIdleConnsPerHost: 1}
	if ca := cfg["tls.ca"]; ca != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM([]byte(ca)) {
			return errors.New("tls.ca holds no PEM certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	t.client = &http.Client{Transport: tr, Timeout: 10 * time.Second}
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
	case "http":
		value, err = t.get()
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

func (t *task) get() (string, error) {
	resp, err := t.client.Get(t.url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d %s", resp.StatusCode, body), nil
}

func (t *task) Commit() error { return nil }
func (t *task) Stop() error   { return nil }
