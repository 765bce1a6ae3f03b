package node

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/wasmconnect/wasmconnect/hcl"
	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/configprovider"
	"github.com/wasmconnect/wasmconnect/runtime/herder"
	"github.com/wasmconnect/wasmconnect/runtime/reconcile"
	"github.com/wasmconnect/wasmconnect/runtime/rest"
)

// reconciler checks the worker's config.providers and, when connectors.dir is set, creates the
// reconciler of the connectors declared there. It returns what the REST server serves: the herder,
// with GET /reconciler when there is a reconciler.
func (n *Node) reconciler(cfg *config.Worker, log *slog.Logger) (rest.Herder, error) {
	if _, err := configprovider.FromProperties(cfg.Props); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	if cfg.ConnectorsDir == "" {
		return n.herder, nil
	}
	opts, err := reconcile.FromProperties(cfg.Props)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Source, err)
	}
	h := n.herder
	n.rec = reconcile.New(reconcile.Config{
		Dir:     cfg.ConnectorsDir,
		Options: opts,
		Client:  reconcile.HerderClient(h),
		// In a cluster the leader reconciles; the other workers serve.
		IsLeader: func() bool {
			st := h.MemberState()
			return st == nil || st.Leader
		},
		HCL:      hcl.Options{},
		Logger:   log,
		WorkerID: n.workerID,
		Metrics:  true,
	})
	n.configs.OnChange(n.rec.Poke) // a REST change to an owned connector is seen at once
	return reconcilingHerder{h, n.rec}, nil
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
