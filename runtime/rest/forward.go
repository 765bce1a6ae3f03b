package rest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// bodyKey is the context key of the request body a herder call serves.
type bodyKey struct{}

// RequestBodyFromContext returns the body of the request a herder call serves, as received (nil for
// routes without a body).
func RequestBodyFromContext(ctx context.Context) []byte {
	b, _ := ctx.Value(bodyKey{}).([]byte)
	return b
}

// ForwardedResponse is another worker's answer to a forwarded request, which the server writes back
// as it came: status, body and Location. Kafka does the same in effect: the resource answers a
// forwarded request with the status the target chose (e.g. 201 or 200 for PUT .../config) and
// passes errors back with the target's status and message. Forward returns it as its error.
type ForwardedResponse struct {
	Status   int
	Body     []byte
	Location string
}

func (f *ForwardedResponse) Error() string {
	return fmt.Sprintf("forwarded request answered %d %s", f.Status, bytes.TrimSpace(f.Body))
}

// The 409s of Kafka's HerderRequestHandler.
var (
	errNoLeaderURL = connect.Conflict("Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.")
	errLastHop     = connect.Conflict("Cannot complete request because of a conflicting operation (e.g. worker rebalance)")
)

// Forwarder sends a request this worker cannot serve to the worker that can (the leader, or the
// worker a task is assigned to), as Kafka's HerderRequestHandler.completeOrForwardRequest does. A
// herder method that finds it is not the right worker returns a *connect.RequestTargetError naming
// that worker, and the server (see WithForwarder) forwards the request there. Only methods whose
// answer is the whole response may do so (those Kafka forwards: create, put and patch config,
// delete, restart, stop, task restart, alter and reset offsets, ...), not one the server combines
// with others (ConnectorStatus, ConnectorInfo under ?expand).
type Forwarder struct {
	// Client sends the requests; nil uses a client with a 90 s timeout. For https workers it must
	// trust their certificates (NewSetup builds one).
	Client *http.Client
	// Key, if set, returns the shared key to sign forwarded requests with (see WithInternalKey).
	Key func() []byte
}

var defaultForwardClient = &http.Client{Timeout: DefaultRequestTimeout}

// maxForwardedBody bounds the answer read from another worker.
const maxForwardedBody = 64 << 20

// Forward forwards the request behind ctx (see RequestFromContext) to the worker at baseURL, its
// advertised URL (e.g. "http://w2:8083/"), and returns its answer as a *ForwardedResponse, or a
// *connect.Error: Kafka's hops are followed, so a request without "forward" is sent with
// forward=true, one with forward=true is sent with forward=false, and one with forward=false (it
// has already been forwarded twice) is a 409 "Cannot complete request because of a conflicting
// operation (e.g. worker rebalance)"; an empty baseURL is the 409 "... no known leader URL ...". The
// method, path, other query parameters and body are those of the original request; of its headers
// only Authorization is copied, as in Kafka; the request is signed when Key is set. A failure to
// reach the worker is a 500 "IO Error trying to forward REST request: ...".
func (f *Forwarder) Forward(ctx context.Context, baseURL string) error {
	orig := RequestFromContext(ctx)
	if orig == nil {
		return fmt.Errorf("cannot forward: the context does not come from a REST request")
	}
	if baseURL == "" {
		return errNoLeaderURL
	}
	q := orig.URL.Query()
	switch fw := q.Get("forward"); {
	case fw == "":
		q.Set("forward", "true")
	case strings.EqualFold(fw, "true"):
		q.Set("forward", "false")
	default: // like Java's Boolean.valueOf, anything else is false: the last hop
		return errLastHop
	}
	base, err := url.Parse(baseURL)
	if err != nil || base.Scheme == "" || base.Host == "" {
		return fmt.Errorf("cannot forward to %q: not an absolute URL", baseURL)
	}
	target := *base
	target.Path = strings.TrimRight(base.Path, "/") + orig.URL.Path
	target.RawPath = ""
	if orig.URL.RawPath != "" {
		target.RawPath = strings.TrimRight(base.EscapedPath(), "/") + orig.URL.RawPath
	}
	target.RawQuery = q.Encode()

	body := RequestBodyFromContext(ctx)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, orig.Method, target.String(), rd)
	if err != nil {
		return fmt.Errorf("cannot forward to %s: %w", baseURL, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a := orig.Header.Get("Authorization"); a != "" {
		req.Header.Set("Authorization", a)
	}
	if f.Key != nil {
		key := f.Key()
		if len(key) == 0 {
			return &connect.Error{Code: http.StatusServiceUnavailable,
				Message: "Cannot forward the request: this worker has not read a session key from the config topic yet"}
		}
		SignRequest(req, key, body)
	}

	client := f.Client
	if client == nil {
		client = defaultForwardClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &connect.Error{Code: http.StatusInternalServerError, Message: "IO Error trying to forward REST request: " + err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxForwardedBody))
	if err != nil {
		return &connect.Error{Code: http.StatusInternalServerError, Message: "IO Error trying to forward REST request: " + err.Error()}
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode >= 400 && resp.StatusCode < 600:
		if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
			msg := strings.TrimSpace(string(b))
			if msg == "" {
				msg = http.StatusText(resp.StatusCode)
			}
			return &connect.Error{Code: resp.StatusCode, Message: msg}
		}
	default:
		return &connect.Error{Code: http.StatusInternalServerError,
			Message: fmt.Sprintf("Unexpected status code when handling forwarded request: %d", resp.StatusCode)}
	}
	return &ForwardedResponse{Status: resp.StatusCode, Body: b, Location: resp.Header.Get("Location")}
}

// WithForwarder makes the server forward the requests its herder says another worker must serve
// (a *connect.RequestTargetError) with f. Without it they are answered with Kafka's 409 "no known
// leader URL".
func WithForwarder(f *Forwarder) Option {
	return func(s *Server) { s.forwarder = f }
}

// CatchingUp is implemented by a Herder that can read its internal topics up to their end. After the
// target worker answered a forwarded write with success, the server calls CatchUp before it answers,
// so that the client's next request to this worker sees the write as it would on the leader
// (read-your-writes, which Kafka gets from serving requests in order on the leader's herder thread).
type CatchingUp interface {
	CatchUp(ctx context.Context) error
}

// forward serves a request the herder says another worker must serve.
func (s *Server) forward(ctx context.Context, target *connect.RequestTargetError) error {
	if s.forwarder == nil {
		return errNoLeaderURL
	}
	answer := s.forwarder.Forward(ctx, target.URL)
	var fr *ForwardedResponse
	if c, ok := s.h.(CatchingUp); ok && errors.As(answer, &fr) && fr.Status < 300 && RequestFromContext(ctx).Method != http.MethodGet {
		if err := c.CatchUp(ctx); err != nil {
			s.log.Warn("reading the internal topics after a forwarded write", "err", err)
		}
	}
	return answer
}

// writeForwarded writes another worker's answer back.
func (s *Server) writeForwarded(w http.ResponseWriter, f *ForwardedResponse) {
	h := w.Header()
	if f.Location != "" {
		h.Set("Location", f.Location)
	}
	if len(f.Body) > 0 {
		h.Set("Content-Type", "application/json")
	}
	if f.Status != http.StatusNoContent {
		h.Set("Content-Length", fmt.Sprint(len(f.Body)))
	}
	w.WriteHeader(f.Status)
	_, _ = w.Write(f.Body)
}
