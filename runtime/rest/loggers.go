package rest

import (
	"context"
	"net/http"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// GET /admin/loggers
func (s *Server) listLoggers(ctx context.Context, _ call) (response, error) {
	loggers, err := s.h.Loggers(ctx)
	if err != nil {
		return response{}, err
	}
	if loggers == nil {
		loggers = map[string]connect.LoggerLevel{}
	}
	return ok(loggers), nil // encoding/json sorts the keys, as Kafka's TreeMap does
}

// GET /admin/loggers/{name}
func (s *Server) getLogger(ctx context.Context, c call) (response, error) {
	name := c.ps.ByName("logger")
	level, found, err := s.h.Logger(ctx, name)
	if err != nil {
		return response{}, err
	}
	if !found {
		return response{}, connect.NotFound("Logger %s not found.", name)
	}
	return ok(level), nil
}

// PUT /admin/loggers/{name}?scope=worker|cluster: 200 with the loggers changed (worker scope, the
// default), 204 (cluster scope). As in Kafka, an unknown scope is taken as worker, a missing level is a
// 400 and an invalid one a 404.
func (s *Server) setLogLevel(ctx context.Context, c call) (response, error) {
	name := c.ps.ByName("logger")
	raw, err := decodeLevel(c.body)
	if err != nil {
		return response{}, err
	}
	level, valid := connect.ParseLogLevel(raw)
	if !valid {
		return response{}, connect.NotFound("invalid log level '%s'.", raw)
	}
	scope := connect.ScopeWorker
	switch sc := c.r.URL.Query().Get("scope"); strings.ToLower(sc) {
	case "", string(connect.ScopeWorker):
	case string(connect.ScopeCluster):
		scope = connect.ScopeCluster
	default:
		s.log.Warn("Received invalid scope in request to adjust logging level; will default to worker", "scope", sc)
	}
	changed, err := s.h.SetLogLevel(ctx, name, level, scope)
	if err != nil {
		return response{}, err
	}
	if scope == connect.ScopeCluster {
		return response{status: http.StatusNoContent}, nil
	}
	if changed == nil {
		changed = []string{}
	}
	return ok(changed), nil
}
