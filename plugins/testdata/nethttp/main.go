// Command nethttp is a test-only wasmconnect plugin module whose source connector, NetHTTP (class
// wasmconnect.testing.NetHTTPSource), GETs url on every poll with net/http over sdk.Dial (https
// with the PEM certificate in tls.ca) and emits the status and body; the client keeps its
// connections alive across polls. It shows that net/http and crypto/tls work in a guest on top of
// the network capability. It is apart from netprobe because net/http and crypto/tls make a module
// several times larger, slower to compile in every worker that loads it.
package main

import (
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
		Name:    "NetHTTP",
		Class:   "wasmconnect.testing.NetHTTPSource",
		Version: "1.0.0",
		Config: []sdk.ConfigDef{
			{Name: "url", Required: true, Importance: sdk.High, Documentation: "URL to GET."},
			{Name: "tls.ca", Default: new(""), Importance: sdk.Low, Documentation: "PEM certificate to trust for https."},
			{Name: "topic", Default: new("nethttp"), Importance: sdk.Medium, Documentation: "The topic of the records."},
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
	url, topic string
	client     *http.Client
}

func (t *task) Start(ctx *sdk.TaskContext, cfg sdk.Config) error {
	t.url, t.topic = cfg["url"], cfg["topic"]
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
	resp, err := t.client.Get(t.url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	value := fmt.Sprintf("%d %s", resp.StatusCode, body)
	return []sdk.SourceRecord{{Topic: t.topic, Value: sdk.String(value), Timestamp: time.Now()}}, nil
}

func (t *task) Commit() error { return nil }
func (t *task) Stop() error   { return nil }
