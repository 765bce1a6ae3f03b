package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/reconcile"
)

// runApply makes the cluster match the connector files through the REST API: it computes the plan
// (as plan prints it), prints it and applies exactly that. With --plan FILE it applies a plan saved
// by plan --out, after checking that the files and the cluster still call for it.
func runApply(ctx context.Context, args []string) error {
	fs := newFlags("apply")
	c := addClusterFlags(fs)
	saved := fs.String("plan", "", "apply this plan, saved by plan --out, if it is still what the files and the cluster call for")
	timeout := fs.Duration("timeout", 60*time.Second, "bound on each REST call")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmconnect apply DIR --url URL [flags]\n\nApplies the plan through the REST API; exit status 1 if a connector could not be changed.")
		fs.PrintDefaults()
	}
	dir, err := dirArg(fs, args)
	if err != nil {
		return err
	}
	plan, cl, err := makePlan(ctx, dir, c, os.Stderr)
	if err != nil {
		return err
	}
	if *saved != "" {
		b, err := os.ReadFile(*saved)
		if err != nil {
			return err
		}
		var old reconcile.Plan
		if err := json.Unmarshal(b, &old); err != nil {
			return fmt.Errorf("%s: not a saved plan: %w", *saved, err)
		}
		if old.Fingerprint != plan.Fingerprint {
			fmt.Fprintln(os.Stderr, "The plan now is:")
			reconcile.Write(os.Stderr, plan)
			return fmt.Errorf("%s is stale: the files or the cluster changed since it was made; run plan again", *saved)
		}
		plan = old
	}
	if *c.jsonOut {
		b, _ := json.MarshalIndent(redacted(plan), "", "  ")
		fmt.Println(string(b))
	} else {
		reconcile.Write(os.Stdout, plan)
	}
	if plan.Changes() == 0 {
		return nil
	}
	results := reconcile.Apply(ctx, cl, plan, reconcile.ApplyOptions{Timeout: *timeout})
	failed := 0
	for _, r := range results {
		var done []string
		for _, op := range r.Done {
			done = append(done, string(op))
		}
		if r.Err != nil {
			failed++
			fmt.Printf("%s: %s failed: %v\n", r.Connector, r.Failed, r.Err)
			continue
		}
		fmt.Printf("%s: %s\n", r.Connector, strings.Join(done, ", "))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d connector(s) not applied", failed, len(results))
	}
	fmt.Printf("Applied: %d connector(s) changed.\n", len(results))
	return nil
}
