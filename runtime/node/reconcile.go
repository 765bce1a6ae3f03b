package node

import (
	"context"

	"github.com/wasmconnect/wasmconnect/hcl"
	"github.com/wasmconnect/wasmconnect/runtime/herder"
	"github.com/wasmconnect/wasmconnect/runtime/reconcile"
)

// newReconciler creates, when connectors.dir is set, the reconciler of the connectors declared
// there.
func (n *Node) newReconciler(context.Context) error {
	rc := n.cfg.Reconcile
	if rc.Dir == "" {
		return nil
	}
	h := n.herder
	n.rec = reconcile.New(reconcile.Config{
		Dir:     rc.Dir,
		Options: reconcile.Options{Owner: rc.Owner, Prune: rc.Prune, Drift: reconcile.DriftMode(rc.Drift)},
		Client:  reconcile.HerderClient(h),
		// In a cluster the leader reconciles; the other workers serve.
		IsLeader: func() bool {
			st := h.MemberState()
			return st == nil || st.Leader
		},
		HCL:      hcl.Options{},
		Logger:   n.log,
		WorkerID: n.workerID,
		Metrics:  true,
	})
	n.configs.OnChange(n.rec.Poke) // a REST change to an owned connector is seen at once
	return nil
}

// startReconciler runs the reconciler, if any, until ctx ends.
func (n *Node) startReconciler(ctx context.Context) {
	if n.rec == nil {
		return
	}
	n.recDone = make(chan struct{})
	go func() {
		defer close(n.recDone)
		n.rec.Run(ctx)
	}()
}

// reconcilingHerder is the herder plus GET /reconciler (rest.Reconciler).
type reconcilingHerder struct {
	*herder.Herder
	rec *reconcile.Reconciler
}

// ReconcilerStatus answers on the leader, which is the worker that reconciles; the others forward.
func (h reconcilingHerder) ReconcilerStatus(ctx context.Context) (any, error) {
	if err := h.RequireLeader(ctx); err != nil {
		return nil, err
	}
	return h.rec.Status(), nil
}
