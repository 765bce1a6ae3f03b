package rest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	vm "github.com/VictoriaMetrics/metrics"
	"github.com/julienschmidt/httprouter"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Defaults of the Server options.
const (
	DefaultRequestTimeout = 90 * time.Second // Kafka's RestServer.DEFAULT_REST_REQUEST_TIMEOUT_MS
	DefaultHealthTimeout  = 10 * time.Second // Kafka's health check timeout
	DefaultMaxBodyBytes   = 8 << 20          // 8 MiB
)

// timeoutGrace is how long a handler may still answer after its deadline: a herder that honours ctx
// gets to return its own error (e.g. a "Request timed out. The worker is currently ..." *connect.Error)
// before the server answers the generic "Request timed out".
const timeoutGrace = 250 * time.Millisecond

// Server serves Kafka Connect's REST API over a Herder. It is an http.Handler; Start, Serve,
// ListenAndServe and Shutdown run it on its own http.Server.
type Server struct {
	h              Herder
	log            *slog.Logger
	router         *httprouter.Router
	requestTimeout time.Duration
	healthTimeout  time.Duration
	maxBody        int64
	writeMetrics   func(io.Writer)

	auth          Authenticator
	anonymousRead bool
	internalKey   func() []byte
	forwarder     *Forwarder
	tlsConfig     *tls.Config
	tlsCheck      func() error // loads the certificate before serving
	topicTracking bool
	topicReset    bool
	table         []route // every route, for the OpenAPI document check

	history func() []connect.StateChange // GET /state-changes

	srv        *http.Server
	baseCtx    context.Context
	cancelBase context.CancelFunc

	mu      sync.Mutex
	addr    net.Addr
	serving sync.WaitGroup
}

// Option configures a Server.
type Option func(*Server)

// WithLogger sets the logger (default slog.Default()). The access log is written at debug level.
func WithLogger(l *slog.Logger) Option {
	return func(s *Server) {
		if l != nil {
			s.log = l
		}
	}
}

// WithRequestTimeout sets how long a request waits for the herder before it fails with 500
// "Request timed out" (default 90 s, as in Kafka).
func WithRequestTimeout(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.requestTimeout = d
		}
	}
}

// WithHealthTimeout sets the GET /health deadline (default 10 s).
func WithHealthTimeout(d time.Duration) Option {
	return func(s *Server) {
		if d > 0 {
			s.healthTimeout = d
		}
	}
}

// WithMaxBodyBytes sets the largest request body accepted (default 8 MiB); larger ones get 413.
func WithMaxBodyBytes(n int64) Option {
	return func(s *Server) {
		if n > 0 {
			s.maxBody = n
		}
	}
}

// WithMetrics sets what GET /metrics writes. The default is VictoriaMetrics' process-wide
// metrics.WritePrometheus(w, true): every registered set (see runtime/metrics) plus the go_* and
// process_* metrics.
func WithMetrics(write func(w io.Writer)) Option {
	return func(s *Server) {
		if write != nil {
			s.writeMetrics = write
		}
	}
}

// WithTopicTracking says whether GET /connectors/{name}/topics is served (topic.tracking.enable,
// default true) and whether PUT /connectors/{name}/topics/reset is (topic.tracking.allow.reset, default
// true); otherwise they are answered 403 "Topic tracking is disabled." and "Topic tracking reset is
// disabled.", as in Kafka.
func WithTopicTracking(enabled, allowReset bool) Option {
	return func(s *Server) { s.topicTracking, s.topicReset = enabled, allowReset }
}

// New returns a Server for h.
func New(h Herder, opts ...Option) *Server {
	s := &Server{
		h:              h,
		log:            slog.Default(),
		requestTimeout: DefaultRequestTimeout,
		healthTimeout:  DefaultHealthTimeout,
		maxBody:        DefaultMaxBodyBytes,
		writeMetrics:   func(w io.Writer) { vm.WritePrometheus(w, true) },
		topicTracking:  true,
		topicReset:     true,
	}
	for _, o := range opts {
		o(s)
	}
	s.baseCtx, s.cancelBase = context.WithCancel(context.Background())
	s.router = s.routes()
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute,
		// Long enough for a request that waits the whole request timeout.
		WriteTimeout: s.requestTimeout + 30*time.Second,
		IdleTimeout:  2 * time.Minute,
		ErrorLog:     slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:  func(net.Listener) context.Context { return s.baseCtx },
		TLSConfig:    s.tlsConfig,
	}
	return s
}

// ServeHTTP routes a request. A trailing slash is ignored ("/connectors/" is "/connectors"), as in
// Kafka. The access log line is written at debug level.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
		u := *r.URL
		u.Path = strings.TrimRight(p, "/")
		if u.Path == "" {
			u.Path = "/"
		}
		u.RawPath = ""
		r2 := *r
		r2.URL = &u
		r = &r2
	}
	lw := &logWriter{ResponseWriter: w, status: http.StatusOK}
	s.router.ServeHTTP(lw, r)
	if s.log.Enabled(r.Context(), slog.LevelDebug) {
		attrs := []slog.Attr{
			slog.String("method", r.Method),
			slog.String("uri", r.URL.RequestURI()),
			slog.Int("status", lw.status),
			slog.Int64("bytes", lw.bytes),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote", r.RemoteAddr),
		}
		if lw.user != "" {
			attrs = append(attrs, slog.String("user", lw.user))
		}
		s.log.LogAttrs(r.Context(), slog.LevelDebug, "REST request", attrs...)
	}
}

// logWriter records the status and size of a response for the access log.
type logWriter struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
	user        string // the authenticated principal, for the access log
}

func (w *logWriter) WriteHeader(code int) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Start listens on addr (e.g. ":8083"; ":0" picks a free port, see Addr) and serves in the background.
// Listening errors are returned; serving errors are logged.
func (s *Server) Start(addr string) error {
	ln, err := s.listen(addr)
	if err != nil {
		return err
	}
	s.serving.Add(1)
	go func() {
		defer s.serving.Done()
		if err := s.serve(ln); err != nil {
			s.log.Error("REST server stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	return nil
}

// ListenAndServe listens on addr and serves until Shutdown; it then returns nil.
func (s *Server) ListenAndServe(addr string) error {
	ln, err := s.listen(addr)
	if err != nil {
		return err
	}
	return s.Serve(ln)
}

// listen checks the TLS setup, listens on addr and records the address it got.
func (s *Server) listen(addr string) (net.Listener, error) {
	if err := s.checkTLS(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rest: listen on %s: %w", addr, err)
	}
	s.setAddr(ln.Addr())
	return ln, nil
}

// Serve serves on ln until Shutdown; it then returns nil. It may be called for several listeners.
// With WithTLS or WithTLSConfig it serves HTTPS (HTTP/1.1 and HTTP/2) on ln, and fails at once,
// closing ln, if the certificate cannot be loaded.
func (s *Server) Serve(ln net.Listener) error {
	if err := s.checkTLS(); err != nil {
		ln.Close()
		s.log.Error("REST server not started", "addr", ln.Addr().String(), "err", err)
		return err
	}
	s.setAddr(ln.Addr())
	s.serving.Add(1)
	defer s.serving.Done()
	return s.serve(ln)
}

func (s *Server) serve(ln net.Listener) error {
	var err error
	if s.tlsConfig != nil {
		s.log.Info("REST server listening", "addr", ln.Addr().String(), "tls", true)
		err = s.srv.ServeTLS(ln, "", "")
	} else {
		s.log.Info("REST server listening", "addr", ln.Addr().String())
		err = s.srv.Serve(ln)
	}
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// checkTLS loads the TLS certificate, if any, so that a bad one fails before serving.
func (s *Server) checkTLS() error {
	if s.tlsCheck != nil {
		return s.tlsCheck()
	}
	return nil
}

// TLS reports whether the server serves HTTPS.
func (s *Server) TLS() bool { return s.tlsConfig != nil }

func (s *Server) setAddr(a net.Addr) {
	s.mu.Lock()
	if s.addr == nil {
		s.addr = a
	}
	s.mu.Unlock()
}

// Addr returns the address of the first listener, or nil before Start, Serve or ListenAndServe.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Shutdown stops accepting connections and waits for in-flight requests to finish, until ctx ends.
// Then it closes the remaining connections and cancels the contexts of the requests still waiting
// on the herder, and returns ctx's error. After Shutdown the Server cannot serve again.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.cancelBase()
		_ = s.srv.Close()
	}
	s.cancelBase()
	s.serving.Wait()
	return err
}

// Close closes all listeners and connections at once, and cancels in-flight requests.
func (s *Server) Close() error {
	s.cancelBase()
	err := s.srv.Close()
	s.serving.Wait()
	return err
}

// requestKey is the context key of the *http.Request a herder call serves.
type requestKey struct{}

// RequestFromContext returns the HTTP request a herder call serves, or nil if ctx does not come from
// this package. A herder that forwards requests to the leader reads the "forward" query parameter and
// the Authorization header from it, as Kafka's HerderRequestHandler does.
func RequestFromContext(ctx context.Context) *http.Request {
	r, _ := ctx.Value(requestKey{}).(*http.Request)
	return r
}

// response is what a handler answers: a status, an optional JSON body, an optional Location.
type response struct {
	status   int
	body     any // nil: no body
	location string
}

// call is what a handler gets: the request (whose body it must not read), the path parameters, and
// for routes made with handleBody the body, already read within the size limit.
type call struct {
	r    *http.Request
	ps   httprouter.Params
	body []byte
}

// handlerFunc is a route's logic. It runs in its own goroutine with a deadline and never touches the
// ResponseWriter or the request body, so a herder that ignores ctx cannot hold the answer past the
// deadline.
type handlerFunc func(ctx context.Context, c call) (response, error)

// errTimedOut is the generic timeout answer.
var errTimedOut = &connect.Error{Code: http.StatusInternalServerError, Message: "Request timed out"}

// handle adapts a handlerFunc to httprouter with the request timeout.
func (s *Server) handle(fn handlerFunc) httprouter.Handle {
	return s.adapt(s.requestTimeout, false, fn, nil)
}

// handleBody is handle for routes with a request body, which is read before fn runs.
func (s *Server) handleBody(fn handlerFunc) httprouter.Handle {
	return s.adapt(s.requestTimeout, true, fn, nil)
}

// adapt runs fn with the given deadline. onTimeout, if set, answers when fn does not return in time;
// the default is 500 "Request timed out".
func (s *Server) adapt(timeout time.Duration, withBody bool, fn handlerFunc, onTimeout func() response) httprouter.Handle {
	type result struct {
		resp response
		err  error
	}
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		c := call{r: r, ps: ps}
		if withBody {
			body, err := s.readBody(r)
			if err != nil {
				s.writeError(w, r, err)
				return
			}
			c.body = body
		}
		ctx := context.WithValue(r.Context(), requestKey{}, r)
		if c.body != nil {
			ctx = context.WithValue(ctx, bodyKey{}, c.body)
		}
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		done := make(chan result, 1)
		go func() {
			defer func() {
				if p := recover(); p != nil {
					s.log.Error("REST handler panicked", "method", r.Method, "path", r.URL.Path,
						"panic", p, "stack", string(debug.Stack()))
					done <- result{err: fmt.Errorf("internal error: %v", p)}
				}
			}()
			resp, err := fn(ctx, c)
			if target := (*connect.RequestTargetError)(nil); errors.As(err, &target) {
				err = s.forward(ctx, target)
			}
			done <- result{resp, err}
		}()
		var res result
		select {
		case res = <-done:
		case <-ctx.Done():
			grace := time.NewTimer(timeoutGrace)
			select {
			case res = <-done:
			case <-grace.C:
				res.err = ctx.Err()
			}
			grace.Stop()
		}
		if res.err != nil && errors.Is(res.err, context.DeadlineExceeded) && ctx.Err() != nil && r.Context().Err() == nil && onTimeout != nil {
			res = result{resp: onTimeout()}
		}
		if res.err != nil {
			s.writeError(w, r, res.err)
			return
		}
		s.writeResponse(w, r, res.resp)
	}
}

// writeResponse writes a handler's answer.
func (s *Server) writeResponse(w http.ResponseWriter, r *http.Request, resp response) {
	if resp.location != "" {
		w.Header().Set("Location", resp.location)
	}
	if resp.body == nil {
		if resp.status != http.StatusNoContent {
			w.Header().Set("Content-Length", "0")
		}
		w.WriteHeader(resp.status)
		return
	}
	s.writeJSON(w, r, resp.status, resp.body)
}

// writeJSON writes v as compact JSON without HTML escaping and without a trailing newline, as Jackson does.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := marshal(v)
	if err != nil {
		s.log.Error("REST response not encodable", "path", r.URL.Path, "err", err)
		status = http.StatusInternalServerError
		b, _ = marshal(errorBody{Code: status, Message: "Could not encode the response: " + err.Error()})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// errorBody is Kafka's error entity.
type errorBody struct {
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

// writeError answers err as {"error_code":N,"message":"..."}: a *connect.Error with its code, a
// deadline as 500 "Request timed out", anything else as 500 with its text.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var fwd *ForwardedResponse
	if errors.As(err, &fwd) {
		s.writeForwarded(w, fwd)
		return
	}
	var ce *connect.Error
	code, msg := http.StatusInternalServerError, err.Error()
	switch {
	case errors.As(err, &ce):
		code, msg = ce.Code, ce.Message
	case errors.Is(err, context.DeadlineExceeded):
		code, msg = errTimedOut.Code, errTimedOut.Message
	case errors.Is(err, context.Canceled):
		msg = "Request cancelled"
	}
	if code < 400 || code > 599 {
		code = http.StatusInternalServerError
	}
	if code >= 500 {
		s.log.Warn("REST request failed", "method", r.Method, "uri", r.URL.RequestURI(), "status", code, "err", err)
	}
	s.writeJSON(w, r, code, errorBody{Code: code, Message: msg})
}
