package rest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
	"github.com/wasmconnect/wasmconnect/runtime/rest/ui"
	"github.com/wasmconnect/wasmconnect/sdk/go/wire"
)

// routes builds the router. Unknown paths answer 404 and known paths with another method 405 (with an
// Allow header), both with Kafka's (Jersey's) texts in the usual error body.
func (s *Server) routes() *httprouter.Router {
	rt := httprouter.New()
	rt.RedirectTrailingSlash = false // ServeHTTP strips trailing slashes instead
	rt.RedirectFixedPath = false
	rt.HandleMethodNotAllowed = true
	rt.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &connect.Error{Code: http.StatusNotFound, Message: "HTTP 404 Not Found"})
	})
	rt.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &connect.Error{Code: http.StatusMethodNotAllowed, Message: "HTTP 405 Method Not Allowed"})
	})
	rt.PanicHandler = func(w http.ResponseWriter, r *http.Request, p any) {
		s.log.Error("REST handler panicked", "method", r.Method, "path", r.URL.Path, "panic", p)
		s.writeError(w, r, fmt.Errorf("internal error: %v", p))
	}

	add := func(method, path string, acc access, withBody bool, h httprouter.Handle) {
		s.table = append(s.table, route{method: method, path: path, access: acc})
		rt.Handle(method, path, s.secure(acc, withBody, h))
	}
	get := func(path string, acc access, h httprouter.Handle) {
		add(http.MethodGet, path, acc, false, h)
		rt.HEAD(path, s.secure(acc, false, h))
	}
	// read, write and body are the usual routes: a GET for the read role, a change for the admin
	// role without or with a JSON body.
	read := func(path string, fn handlerFunc) { get(path, accessRead, s.handle(fn)) }
	write := func(method, path string, fn handlerFunc) { add(method, path, accessAdmin, false, s.handle(fn)) }
	body := func(method, path string, fn handlerFunc) { add(method, path, accessAdmin, true, s.handleBody(fn)) }

	read("/", s.serverInfo)
	get("/health", accessPublic, s.adapt(s.healthTimeout, false, s.health, unhealthy))
	get("/metrics", accessRead, s.metrics)
	get("/openapi.json", accessRead, s.openAPI)

	read("/workers", s.workers)
	read("/reconciler", s.reconcilerStatus)
	read("/state-changes", s.stateChanges)
	read("/session", s.session)

	read("/connectors", s.listConnectors)
	body(http.MethodPost, "/connectors", s.createConnector)
	read("/connectors/:name", s.getConnector)
	write(http.MethodDelete, "/connectors/:name", s.deleteConnector)
	read("/connectors/:name/config", s.getConfig)
	body(http.MethodPut, "/connectors/:name/config", s.putConfig)
	body(http.MethodPatch, "/connectors/:name/config", s.patchConfig)
	read("/connectors/:name/status", s.getStatus)
	write(http.MethodPost, "/connectors/:name/restart", s.restartConnector)
	write(http.MethodPut, "/connectors/:name/pause", s.setTarget(connect.TargetPaused, http.StatusAccepted))
	write(http.MethodPut, "/connectors/:name/resume", s.setTarget(connect.TargetStarted, http.StatusAccepted))
	write(http.MethodPut, "/connectors/:name/stop", s.setTarget(connect.TargetStopped, http.StatusNoContent))
	read("/connectors/:name/tasks", s.getTasks)
	read("/connectors/:name/tasks-config", s.getTasksConfig)
	read("/connectors/:name/tasks/:task/status", s.getTaskStatus)
	write(http.MethodPost, "/connectors/:name/tasks/:task/restart", s.restartTask)
	read("/connectors/:name/topics", s.getTopics)
	write(http.MethodPut, "/connectors/:name/topics/reset", s.resetTopics)
	write(http.MethodPut, "/connectors/:name/fence", s.fenceZombies)
	read("/connectors/:name/offsets", s.getOffsets)
	body(http.MethodPatch, "/connectors/:name/offsets", s.alterOffsets)
	write(http.MethodDelete, "/connectors/:name/offsets", s.resetOffsets)

	read("/connector-plugins", s.listPlugins)
	read("/connector-plugins/:plugin/config", s.pluginConfig)
	// Validation changes nothing: the read role may call it, but always authenticated.
	add(http.MethodPut, "/connector-plugins/:plugin/config/validate", accessReadAuth, true, s.handleBody(s.validateConfig))

	read("/admin/loggers", s.listLoggers)
	read("/admin/loggers/:logger", s.getLogger)
	body(http.MethodPut, "/admin/loggers/:logger", s.setLogLevel)

	// The web console is not part of the API (nor of openapi.json): see consoleRoutes.
	console := ui.Handler()
	for _, path := range consoleRoutes {
		rt.Handler(http.MethodGet, path, console)
		rt.Handler(http.MethodHead, path, console)
	}
	return rt
}

// route is one registered route.
type route struct {
	method, path string
	access       access
}

func ok(body any) response { return response{status: http.StatusOK, body: body} }

// GET /
func (s *Server) serverInfo(ctx context.Context, _ call) (response, error) {
	return ok(s.h.ServerInfo(ctx)), nil
}

// healthBody is Kafka's WorkerStatus, with the checks behind it for clients that may see them.
type healthBody struct {
	Status  connect.HealthStatus  `json:"status"`
	Message string                `json:"message"`
	Checks  []connect.HealthCheck `json:"checks,omitempty"`
}

func healthResponse(h connect.Health) response {
	var code int
	var msg string
	switch h.Status {
	case connect.HealthHealthy:
		code, msg = http.StatusOK, "Worker has completed startup and is ready to handle requests."
	case connect.HealthStarting:
		code, msg = http.StatusServiceUnavailable, "Worker is still starting up."
	default:
		h.Status = connect.HealthUnhealthy
		code, msg = http.StatusInternalServerError, "Worker was unable to handle this request and may be unable to handle other requests."
	}
	if h.Detail != "" {
		msg += " " + h.Detail
	}
	return response{status: code, body: healthBody{h.Status, msg, h.Checks}}
}

func unhealthy() response { return healthResponse(connect.Health{Status: connect.HealthUnhealthy}) }

// GET /workers (wasmconnect): the group as this worker sees it.
func (s *Server) workers(ctx context.Context, _ call) (response, error) {
	info, err := s.h.Workers(ctx)
	if err != nil {
		return response{}, err
	}
	return ok(info), nil
}

// GET /health: open to anyone, with the checks only for a client that may read the API.
func (s *Server) health(ctx context.Context, c call) (response, error) {
	h := s.h.Health(ctx)
	if !s.readsHealthChecks(c.r) {
		h.Checks = nil
	}
	return healthResponse(h), nil
}

// GET /metrics: Prometheus text format.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) {
	var b bytes.Buffer
	s.writeMetrics(&b)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	_, _ = w.Write(b.Bytes())
}

// expansion is one connector of GET /connectors?expand=...
type expansion struct {
	Status *connect.ConnectorStateInfo `json:"status,omitempty"`
	Info   *connect.ConnectorInfo      `json:"info,omitempty"`
}

// GET /connectors[?expand=status&expand=info]. As in Kafka, unknown expand values are ignored and
// connectors that vanish during the lookup are left out.
func (s *Server) listConnectors(ctx context.Context, c call) (response, error) {
	names, err := s.h.Connectors(ctx)
	if err != nil {
		return response{}, err
	}
	if names == nil {
		names = []string{}
	}
	expand, has := c.r.URL.Query()["expand"]
	if !has {
		return ok(names), nil
	}
	var wantStatus, wantInfo bool
	for _, e := range expand {
		switch e {
		case "status":
			wantStatus = true
		case "info":
			wantInfo = true
		}
	}
	out := make(map[string]expansion, len(names))
	for _, name := range names {
		var e expansion
		if wantStatus {
			st, err := s.h.ConnectorStatus(ctx, name)
			if connect.IsNotFound(err) {
				continue
			} else if err != nil {
				return response{}, err
			}
			st = normStatus(st)
			e.Status = &st
		}
		if wantInfo {
			info, err := s.h.ConnectorInfo(ctx, name)
			if connect.IsNotFound(err) {
				continue
			} else if err != nil {
				return response{}, err
			}
			info = normInfo(info)
			e.Info = &info
		}
		out[name] = e
	}
	return ok(out), nil
}

// POST /connectors
func (s *Server) createConnector(ctx context.Context, c call) (response, error) {
	req, err := decodeCreate(c.body)
	if err != nil {
		return response{}, err
	}
	if err := checkAndPutName(req.name, req.config); err != nil {
		return response{}, err
	}
	if err := validateName(req.name); err != nil {
		return response{}, err
	}
	info, err := s.h.CreateConnector(ctx, req.name, req.config, req.initial)
	if err != nil {
		return response{}, err
	}
	return response{status: http.StatusCreated, body: normInfo(info), location: location(req.name)}, nil
}

// location is the Location of a created connector: /connectors/{name}, percent-encoded.
func location(name string) string { return "/connectors/" + url.PathEscape(name) }

// GET /connectors/{name}
func (s *Server) getConnector(ctx context.Context, c call) (response, error) {
	info, err := s.h.ConnectorInfo(ctx, c.ps.ByName("name"))
	if err != nil {
		return response{}, err
	}
	return ok(normInfo(info)), nil
}

// DELETE /connectors/{name}
func (s *Server) deleteConnector(ctx context.Context, c call) (response, error) {
	if err := s.h.DeleteConnector(ctx, c.ps.ByName("name")); err != nil {
		return response{}, err
	}
	return response{status: http.StatusNoContent}, nil
}

// GET /connectors/{name}/config
func (s *Server) getConfig(ctx context.Context, c call) (response, error) {
	cfg, err := s.h.ConnectorConfig(ctx, c.ps.ByName("name"))
	if err != nil {
		return response{}, err
	}
	if cfg == nil {
		cfg = map[string]string{}
	}
	return ok(cfg), nil
}

// PUT /connectors/{name}/config: 201 with Location if created, 200 if updated.
func (s *Server) putConfig(ctx context.Context, c call) (response, error) {
	name := c.ps.ByName("name")
	cfg, err := decodeFlatConfig(c.body)
	if err != nil {
		return response{}, err
	}
	if err := checkAndPutName(name, cfg); err != nil {
		return response{}, err
	}
	if err := validateName(name); err != nil {
		return response{}, err
	}
	info, created, err := s.h.PutConnectorConfig(ctx, name, cfg)
	if err != nil {
		return response{}, err
	}
	if created {
		return response{status: http.StatusCreated, body: normInfo(info), location: location(name)}, nil
	}
	return ok(normInfo(info)), nil
}

// PATCH /connectors/{name}/config: a merge patch; null removes a key. 200 with the merged ConnectorInfo.
func (s *Server) patchConfig(ctx context.Context, c call) (response, error) {
	name := c.ps.ByName("name")
	patch, err := decodePatch(c.body)
	if err != nil {
		return response{}, err
	}
	if v, ok := patch["name"]; ok {
		if v == nil {
			return response{}, connect.BadRequest("Connector name configuration cannot be removed: it is always the connector's name (%s)", name)
		}
		if *v != name {
			return response{}, connect.BadRequest("Connector name configuration (%s) doesn't match connector name in the URL (%s)", *v, name)
		}
	}
	info, err := s.h.PatchConnectorConfig(ctx, name, patch)
	if err != nil {
		return response{}, err
	}
	return ok(normInfo(info)), nil
}

// GET /connectors/{name}/status
func (s *Server) getStatus(ctx context.Context, c call) (response, error) {
	st, err := s.h.ConnectorStatus(ctx, c.ps.ByName("name"))
	if err != nil {
		return response{}, err
	}
	return ok(normStatus(st)), nil
}

// POST /connectors/{name}/restart?includeTasks=&onlyFailed=: 204 when both are false (only the
// connector instance restarts), else 202 with the status.
func (s *Server) restartConnector(ctx context.Context, c call) (response, error) {
	name := c.ps.ByName("name")
	q := c.r.URL.Query()
	includeTasks, err := boolParam(q, "includeTasks", false)
	if err != nil {
		return response{}, err
	}
	onlyFailed, err := boolParam(q, "onlyFailed", false)
	if err != nil {
		return response{}, err
	}
	st, err := s.h.RestartConnector(ctx, name, includeTasks, onlyFailed)
	if err != nil {
		return response{}, err
	}
	if !includeTasks && !onlyFailed {
		return response{status: http.StatusNoContent}, nil
	}
	if st == nil {
		got, err := s.h.ConnectorStatus(ctx, name)
		if err != nil {
			return response{}, err
		}
		st = &got
	}
	return response{status: http.StatusAccepted, body: normStatus(*st)}, nil
}

// PUT /connectors/{name}/pause (202), /resume (202), /stop (204).
func (s *Server) setTarget(target connect.TargetState, status int) handlerFunc {
	return func(ctx context.Context, c call) (response, error) {
		if err := s.h.SetTargetState(ctx, c.ps.ByName("name"), target); err != nil {
			return response{}, err
		}
		return response{status: status}, nil
	}
}

// GET /connectors/{name}/tasks
func (s *Server) getTasks(ctx context.Context, c call) (response, error) {
	tasks, err := s.h.TaskConfigs(ctx, c.ps.ByName("name"))
	if err != nil {
		return response{}, err
	}
	if tasks == nil {
		tasks = []connect.TaskInfo{}
	}
	for i := range tasks {
		if tasks[i].Config == nil {
			tasks[i].Config = map[string]string{}
		}
	}
	return ok(tasks), nil
}

// GET /connectors/{name}/tasks-config (deprecated in Kafka 3.7, KIP-970): {"x-0":{...}}.
func (s *Server) getTasksConfig(ctx context.Context, c call) (response, error) {
	tasks, err := s.h.TaskConfigs(ctx, c.ps.ByName("name"))
	if err != nil {
		return response{}, err
	}
	out := make(map[string]map[string]string, len(tasks))
	for _, t := range tasks {
		cfg := t.Config
		if cfg == nil {
			cfg = map[string]string{}
		}
		out[t.ID.String()] = cfg
	}
	return ok(out), nil
}

// taskID parses the {task} path segment. Like Kafka (a JAX-RS Integer path parameter), a segment that
// is not an integer is a 404; so is a negative one.
func taskID(ps httprouter.Params) (connect.TaskID, error) {
	name, raw := ps.ByName("name"), ps.ByName("task")
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		return connect.TaskID{}, connect.NotFound("Invalid task ID %q for connector %s: must be a non-negative integer", raw, name)
	}
	return connect.TaskID{Connector: name, Task: n}, nil
}

// GET /connectors/{name}/tasks/{task}/status, from the connector's status.
func (s *Server) getTaskStatus(ctx context.Context, c call) (response, error) {
	id, err := taskID(c.ps)
	if err != nil {
		return response{}, err
	}
	st, err := s.h.ConnectorStatus(ctx, id.Connector)
	if err != nil {
		if connect.IsNotFound(err) {
			return response{}, connect.NotFound("No status found for task %s", id)
		}
		return response{}, err
	}
	for _, t := range st.Tasks {
		if t.ID == id.Task {
			return ok(t), nil
		}
	}
	return response{}, connect.NotFound("No status found for task %s", id)
}

// POST /connectors/{name}/tasks/{task}/restart
func (s *Server) restartTask(ctx context.Context, c call) (response, error) {
	id, err := taskID(c.ps)
	if err != nil {
		return response{}, err
	}
	if err := s.h.RestartTask(ctx, id); err != nil {
		return response{}, err
	}
	return response{status: http.StatusNoContent}, nil
}

// GET /connector-plugins?connectorsOnly=true|false (default true).
func (s *Server) listPlugins(ctx context.Context, c call) (response, error) {
	connectorsOnly, err := boolParam(c.r.URL.Query(), "connectorsOnly", true)
	if err != nil {
		return response{}, err
	}
	kinds := []wire.Kind{wire.KindSource, wire.KindSink}
	if !connectorsOnly {
		// KIP-769: converters, header converters, transformations and predicates too.
		kinds = append(kinds, wire.KindConverter, wire.KindTransformation, wire.KindPredicate)
	}
	plugins := s.h.Plugins(ctx, kinds...)
	if plugins == nil {
		plugins = []connect.PluginInfo{}
	}
	return ok(plugins), nil
}

// boolParam reads a boolean query parameter: "true" or "false" in any case; absent or empty gives def.
// Kafka would read any other value as false; here it is a 400, so a typo is not silently ignored.
func boolParam(q url.Values, name string, def bool) (bool, error) {
	v := q.Get(name)
	switch {
	case v == "":
		return def, nil
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	return false, connect.BadRequest("Invalid value %q for query parameter %s: must be true or false", v, name)
}

// normInfo gives nil slices and maps their empty JSON form, as Kafka never answers null there.
func normInfo(info connect.ConnectorInfo) connect.ConnectorInfo {
	if info.Config == nil {
		info.Config = map[string]string{}
	}
	if info.Tasks == nil {
		info.Tasks = []connect.TaskID{}
	}
	return info
}

// normStatus sorts tasks by id, as Kafka does, and gives a nil task list its empty form.
func normStatus(st connect.ConnectorStateInfo) connect.ConnectorStateInfo {
	if st.Tasks == nil {
		st.Tasks = []connect.TaskState{}
	} else if !sort.SliceIsSorted(st.Tasks, func(i, j int) bool { return st.Tasks[i].ID < st.Tasks[j].ID }) {
		tasks := append([]connect.TaskState(nil), st.Tasks...)
		sort.Slice(tasks, func(i, j int) bool { return tasks[i].ID < tasks[j].ID })
		st.Tasks = tasks
	}
	return st
}
