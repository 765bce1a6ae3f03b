package rest

import (
	"context"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Reconciler is implemented by a Herder whose worker reconciles connectors declared in HCL files
// (connectors.dir): GET /reconciler answers its status (the worker node wraps its herder to add it).
type Reconciler interface {
	// ReconcilerStatus returns the reconciliation state, encoded as JSON: the files, their
	// errors with positions, the last run, the drift count and each connector's result.
	ReconcilerStatus(ctx context.Context) (any, error)
}

// GET /reconciler (wasmconnect): the HCL reconciler's state; 404 when the worker has none.
func (s *Server) reconcilerStatus(ctx context.Context, _ call) (response, error) {
	r, has := s.h.(Reconciler)
	if !has {
		return response{}, connect.NotFound("This worker does not reconcile connectors from HCL files: connectors.dir is not set")
	}
	st, err := r.ReconcilerStatus(ctx)
	if err != nil {
		return response{}, err
	}
	return ok(st), nil
}
