package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/config"
	"github.com/wasmconnect/wasmconnect/runtime/doctor"
	"github.com/wasmconnect/wasmconnect/runtime/herder"
	"github.com/wasmconnect/wasmconnect/runtime/node"
)

func runDoctor(ctx context.Context, args []string) error {
	fs := newFlags("doctor")
	file := fs.String("config", "", "worker config: the connect-distributed.properties (or .hcl) of the worker to check")
	asJSON := fs.Bool("json", false, "print the findings as one JSON object")
	timeout := fs.Duration("timeout", 5*time.Second, "bound on each network check")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" && fs.NArg() == 1 {
		*file = fs.Arg(0)
	}
	if *file == "" {
		return fmt.Errorf("--config FILE is required")
	}
	props, err := readWorkerProps(*file)
	if err != nil {
		return err
	}
	cfg, err := config.Parse(*file, props, config.Distributed)
	if err != nil {
		return err
	}
	r := doctor.Run(ctx, cfg, doctor.Options{Timeout: *timeout, Version: herder.Version, SharedSettings: node.SharedSettings})
	if *asJSON {
		out := struct {
			doctor.Report
			Problems int `json:"problems"`
		}{r, r.Problems()}
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	} else {
		printReport(os.Stdout, r)
	}
	if n := r.Problems(); n > 0 {
		return fmt.Errorf("%d %s", n, plural(n, "problem", "problems"))
	}
	return nil
}

// printReport writes the findings for a person: one line each, the fix under it.
func printReport(w io.Writer, r doctor.Report) {
	fmt.Fprintf(w, "wasmconnect doctor: worker %s, group.id %s\n", r.Worker, r.GroupID)
	warnings := 0
	for _, f := range r.Findings {
		label := string(f.Status)
		switch f.Status {
		case doctor.Problem:
			label = "PROBLEM"
		case doctor.Warn:
			warnings++
		}
		fmt.Fprintf(w, "  %-8s %-16s %s\n", label, f.Check, f.Message)
		if f.Fix != "" && f.Status != doctor.OK {
			fmt.Fprintf(w, "  %-8s %-16s fix: %s\n", "", "", f.Fix)
		}
	}
	n := r.Problems()
	fmt.Fprintf(w, "%d %s, %d %s\n", n, plural(n, "problem", "problems"), warnings, plural(warnings, "warning", "warnings"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
