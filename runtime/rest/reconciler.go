package rest

import (
	"context"
)

// Reconciler is implemented by a Herder whose worker reconciles connectors declared in HCL files
// (connectors.dir): GET /reconciler answers its status (the worker node wraps its herder to add it).
type Reconciler interface {
	// ReconcilerStatus returns the reconciliation state, encoded as JSON: the files, their
	// errors with positions, the last run, the drift count and each connector's result.
	ReconcilerStatus(ctx context.Context) (any, error)
}

// noReconciler is GET /reconciler's answer on a worker without connectors.dir.
type noReconciler struct {
	Dir     string `json:"dir"`
	Active  bool   `json:"active"`
	Message string `json:"message"`
}

// GET /reconciler (wasmconnect): the HCL reconciler's state.
func (s *Server) reconcilerStatus(ctx context.Context, _ call) (response, error) {
	r, has := s.h.(Reconciler)
	if !has {
		return ok(noReconciler{Message: "This worker does not reconcile connectors from HCL files: connectors.dir is not set"}), nil
	}
	st, err := r.ReconcilerStatus(ctx)
	if err != nil {
		return response{}, err
	}
	return ok(st), nil
}
