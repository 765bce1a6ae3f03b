package rest

import (
	"context"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// WithStateHistory serves GET /state-changes from history, which returns the cluster's recent
// connector and task state changes oldest first (the worker's status store keeps them). Without it
// the route answers an empty list.
func WithStateHistory(history func() []connect.StateChange) Option {
	return func(s *Server) { s.history = history }
}

// GET /state-changes[?connector=name] (wasmconnect): the recent state changes, newest first.
func (s *Server) stateChanges(_ context.Context, c call) (response, error) {
	out := []connect.StateChange{}
	if s.history == nil {
		return ok(out), nil
	}
	only := c.r.URL.Query().Get("connector")
	all := s.history()
	for i := len(all) - 1; i >= 0; i-- {
		if only == "" || all[i].Connector == only {
			out = append(out, all[i])
		}
	}
	return ok(out), nil
}

// GET /session (wasmconnect): who the credentials name and whether they may change anything.
func (s *Server) session(ctx context.Context, _ call) (response, error) {
	if s.auth == nil {
		return ok(connect.Session{Role: string(RoleAdmin), MayChange: true}), nil
	}
	p, has := PrincipalFromContext(ctx)
	if !has { // an anonymous reader (WithAnonymousRead)
		return ok(connect.Session{Auth: true, Role: string(RoleRead)}), nil
	}
	return ok(connect.Session{Auth: true, User: p.Name, Role: string(p.Role), MayChange: p.Role == RoleAdmin}), nil
}

// consoleRoutes are the paths of the web console (package ui): static files, open to anyone like
// GET /health, since they hold no data; the console reads everything through the API with the
// user's credentials.
var consoleRoutes = []string{"/ui", "/ui/*file"}
