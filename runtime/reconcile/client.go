package reconcile

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Client is what the reconciler needs from a Kafka Connect cluster. Errors carrying an HTTP status
// are *connect.Error (connect.StatusCode reads them).
type Client interface {
	// List returns every connector with its config and state.
	List(ctx context.Context) (map[string]Actual, error)
	// Create creates a connector in an initial state (RUNNING, PAUSED or STOPPED).
	Create(ctx context.Context, name string, cfg map[string]string, initial string) error
	// Update replaces a connector's config.
	Update(ctx context.Context, name string, cfg map[string]string) error
	// SetState pauses, resumes or stops a connector (OpPause, OpResume, OpStop).
	SetState(ctx context.Context, name string, op Op) error
	// Delete deletes a connector.
	Delete(ctx context.Context, name string) error
}

// RESTClient talks to any Kafka Connect REST API: a wasmconnect worker or Apache Kafka Connect.
type RESTClient struct {
	URL    string       // e.g. http://connect:8083
	HTTP   *http.Client // nil: a client with a 90 s timeout
	Header http.Header  // added to every request (Authorization)
}

var defaultHTTP = &http.Client{Timeout: 90 * time.Second}

func (c *RESTClient) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.URL, "/")+path, rd)
	if err != nil {
		return err
	}
	for k, vs := range c.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Code    int    `json:"error_code"`
			Message string `json:"message"`
		}
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &e) == nil && e.Message != "" {
			msg = e.Message
		}
		if msg == "" {
			msg = resp.Status
		}
		return &connect.Error{Code: resp.StatusCode, Message: fmt.Sprintf("%s %s: %d %s", method, path, resp.StatusCode, msg)}
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return nil
}

func connectorPath(name string, suffix string) string {
	return "/connectors/" + url.PathEscape(name) + suffix
}

// List uses GET /connectors?expand=info&expand=status (Kafka 2.3+), and one GET per connector on
// servers that ignore expand.
func (c *RESTClient) List(ctx context.Context) (map[string]Actual, error) {
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/connectors?expand=info&expand=status", nil, &raw); err != nil {
		return nil, err
	}
	out := map[string]Actual{}
	var expanded map[string]struct {
		Info *struct {
			Config map[string]string `json:"config"`
		} `json:"info"`
		Status *connect.ConnectorStateInfo `json:"status"`
	}
	if err := json.Unmarshal(raw, &expanded); err == nil {
		for name, e := range expanded {
			a := Actual{Name: name, Config: map[string]string{}}
			if e.Info != nil && e.Info.Config != nil {
				a.Config = e.Info.Config
			}
			if e.Status != nil {
				a.State = string(e.Status.Connector.State)
			}
			out[name] = a
		}
		return out, nil
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return nil, fmt.Errorf("GET /connectors: unexpected answer: %.200s", raw)
	}
	for _, name := range names {
		a := Actual{Name: name}
		if err := c.do(ctx, http.MethodGet, connectorPath(name, "/config"), nil, &a.Config); err != nil {
			if connect.IsNotFound(err) {
				continue // deleted meanwhile
			}
			return nil, err
		}
		var st connect.ConnectorStateInfo
		if err := c.do(ctx, http.MethodGet, connectorPath(name, "/status"), nil, &st); err == nil {
			a.State = string(st.Connector.State)
		}
		out[name] = a
	}
	return out, nil
}

// Create is POST /connectors; initial_state (Kafka 3.7+) is sent only when it is not RUNNING.
func (c *RESTClient) Create(ctx context.Context, name string, cfg map[string]string, initial string) error {
	body := map[string]any{"name": name, "config": cfg}
	if initial != "" && initial != "RUNNING" {
		body["initial_state"] = initial
	}
	return c.do(ctx, http.MethodPost, "/connectors", body, nil)
}

// Update is PUT /connectors/{name}/config.
func (c *RESTClient) Update(ctx context.Context, name string, cfg map[string]string) error {
	return c.do(ctx, http.MethodPut, connectorPath(name, "/config"), cfg, nil)
}

// SetState is PUT /connectors/{name}/pause, /resume or /stop.
func (c *RESTClient) SetState(ctx context.Context, name string, op Op) error {
	switch op {
	case OpPause, OpResume, OpStop:
	default:
		return fmt.Errorf("SetState: %s is not a state change", op)
	}
	return c.do(ctx, http.MethodPut, connectorPath(name, "/"+string(op)), nil, nil)
}

// Delete is DELETE /connectors/{name}.
func (c *RESTClient) Delete(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, connectorPath(name, ""), nil, nil)
}

// Herder is the part of a worker's herder the in-process client uses (runtime/herder.Herder has it).
type Herder interface {
	Connectors(ctx context.Context) ([]string, error)
	ConnectorConfig(ctx context.Context, name string) (map[string]string, error)
	ConnectorStatus(ctx context.Context, name string) (connect.ConnectorStateInfo, error)
	CreateConnector(ctx context.Context, name string, cfg map[string]string, initial connect.TargetState) (connect.ConnectorInfo, error)
	PutConnectorConfig(ctx context.Context, name string, cfg map[string]string) (connect.ConnectorInfo, bool, error)
	SetTargetState(ctx context.Context, name string, state connect.TargetState) error
	DeleteConnector(ctx context.Context, name string) error
}

// HerderClient is a Client over the worker's own herder, for the reconciler running inside the
// worker: the same operations as the REST API, without HTTP, authentication or TLS to itself.
func HerderClient(h Herder) Client { return herderClient{h} }

type herderClient struct{ h Herder }

func (c herderClient) List(ctx context.Context) (map[string]Actual, error) {
	names, err := c.h.Connectors(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Actual, len(names))
	for _, name := range names {
		cfg, err := c.h.ConnectorConfig(ctx, name)
		if err != nil {
			if connect.IsNotFound(err) {
				continue
			}
			return nil, err
		}
		a := Actual{Name: name, Config: cfg}
		if st, err := c.h.ConnectorStatus(ctx, name); err == nil {
			a.State = string(st.Connector.State)
		}
		out[name] = a
	}
	return out, nil
}

func (c herderClient) Create(ctx context.Context, name string, cfg map[string]string, initial string) error {
	t, err := connect.ParseInitialState(initial)
	if err != nil {
		return err
	}
	_, err = c.h.CreateConnector(ctx, name, cfg, t)
	return err
}

func (c herderClient) Update(ctx context.Context, name string, cfg map[string]string) error {
	_, _, err := c.h.PutConnectorConfig(ctx, name, cfg)
	return err
}

func (c herderClient) SetState(ctx context.Context, name string, op Op) error {
	var t connect.TargetState
	switch op {
	case OpPause:
		t = connect.TargetPaused
	case OpResume:
		t = connect.TargetStarted
	case OpStop:
		t = connect.TargetStopped
	default:
		return fmt.Errorf("SetState: %s is not a state change", op)
	}
	return c.h.SetTargetState(ctx, name, t)
}

func (c herderClient) Delete(ctx context.Context, name string) error {
	return c.h.DeleteConnector(ctx, name)
}
