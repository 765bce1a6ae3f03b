package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/wasmconnect/wasmconnect/hcl"
	"github.com/wasmconnect/wasmconnect/runtime/reconcile"
)

// varsFlag collects repeated --var name=value flags.
type varsFlag map[string]string

func (v varsFlag) String() string {
	var parts []string
	for k, val := range v {
		parts = append(parts, k+"="+val)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (v varsFlag) Set(s string) error {
	name, val, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%q: expected name=value", s)
	}
	v[strings.TrimSpace(name)] = val
	return nil
}

// clusterFlags are the flags of plan and apply: the directory's settings and how to reach the
// cluster.
type clusterFlags struct {
	vars    varsFlag
	url     *string
	owner   *string
	prune   *bool
	drift   *string
	user    *string
	token   *string
	jsonOut *bool
}

func addClusterFlags(fs *flag.FlagSet) *clusterFlags {
	c := &clusterFlags{vars: varsFlag{}}
	fs.Var(c.vars, "var", "set a variable: --var name=value (repeatable); WASMCONNECT_VAR_<name> works too")
	c.url = fs.String("url", os.Getenv("WASMCONNECT_URL"), "Kafka Connect REST URL, e.g. http://connect:8083 (default $WASMCONNECT_URL)")
	c.owner = fs.String("owner", "", "owner id written as wasmconnect.managed.by (default: the directory's name, as the worker's connectors.owner)")
	c.prune = fs.Bool("prune", false, "also delete connectors that have no owner (created through REST) and are not declared")
	c.drift = fs.String("drift", "revert", "what to do with REST changes to owned connectors: revert or report")
	c.user = fs.String("user", "", "basic authentication, USER:PASSWORD")
	c.token = fs.String("token", "", "bearer token")
	c.jsonOut = fs.Bool("json", false, "print the plan as JSON")
	return c
}

// dirArg takes the directory argument, which may come before or after the flags.
func dirArg(fs *flag.FlagSet, args []string) (string, error) {
	var dir string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dir, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if dir == "" && fs.NArg() > 0 {
		dir = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return "", fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if dir == "" {
		return "", fmt.Errorf("the directory of connector files is required")
	}
	return dir, nil
}

func (c *clusterFlags) options(dir string) (reconcile.Options, error) {
	o := reconcile.Options{Owner: *c.owner, Prune: *c.prune, Drift: reconcile.DriftMode(*c.drift)}
	if o.Owner == "" {
		o.Owner = reconcile.DefaultOwner(dir)
	}
	switch o.Drift {
	case reconcile.DriftRevert, reconcile.DriftReport:
	default:
		return o, fmt.Errorf("--drift %s: expected revert or report", *c.drift)
	}
	return o, nil
}

func (c *clusterFlags) client() (*reconcile.RESTClient, error) {
	if *c.url == "" {
		return nil, fmt.Errorf("--url is required (or WASMCONNECT_URL), e.g. --url http://127.0.0.1:8083")
	}
	rc := &reconcile.RESTClient{URL: *c.url, Header: http.Header{}}
	switch {
	case *c.user != "":
		rc.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(*c.user)))
	case *c.token != "":
		rc.Header.Set("Authorization", "Bearer "+*c.token)
	}
	return rc, nil
}

// loadDir reads the connector files, printing every problem with its position.
func loadDir(dir string, vars varsFlag, stderr io.Writer) (*hcl.Connectors, error) {
	cs, err := hcl.LoadConnectorsDir(dir, hcl.Options{Vars: vars})
	if err != nil {
		var he *hcl.Error
		if errors.As(err, &he) {
			for _, p := range he.Problems {
				fmt.Fprintln(stderr, p.String())
			}
			return nil, fmt.Errorf("%s: %d problem(s) in the connector files", dir, len(he.Problems))
		}
		return nil, err
	}
	return cs, nil
}

// makePlan reads the files and the cluster and diffs them.
func makePlan(ctx context.Context, dir string, c *clusterFlags, stderr io.Writer) (reconcile.Plan, *reconcile.RESTClient, error) {
	opts, err := c.options(dir)
	if err != nil {
		return reconcile.Plan{}, nil, err
	}
	cl, err := c.client()
	if err != nil {
		return reconcile.Plan{}, nil, err
	}
	cs, err := loadDir(dir, c.vars, stderr)
	if err != nil {
		return reconcile.Plan{}, nil, err
	}
	actual, err := cl.List(ctx)
	if err != nil {
		return reconcile.Plan{}, nil, fmt.Errorf("reading the cluster's connectors at %s: %w", *c.url, err)
	}
	return reconcile.Diff(cs.Connectors, actual, opts), cl, nil
}

// runPlan prints what apply would do. Exit status: 0 without changes, 2 with changes, 1 on error.
func runPlan(ctx context.Context, args []string) error {
	fs := newFlags("plan")
	c := addClusterFlags(fs)
	out := fs.String("out", "", "save the plan to this file, for apply --plan")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: wasmconnect plan DIR --url URL [flags]\n\nPrints what apply would change; exit status 0: nothing, 2: changes, 1: error.")
		fs.PrintDefaults()
	}
	dir, err := dirArg(fs, args)
	if err != nil {
		return err
	}
	plan, _, err := makePlan(ctx, dir, c, os.Stderr)
	if err != nil {
		return err
	}
	if *out != "" {
		b, _ := json.MarshalIndent(plan, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o600); err != nil {
			return err
		}
	}
	if *c.jsonOut {
		b, _ := json.MarshalIndent(redacted(plan), "", "  ")
		fmt.Println(string(b))
	} else {
		reconcile.Write(os.Stdout, plan)
	}
	if plan.Changes() > 0 {
		os.Exit(2)
	}
	return nil
}

// redacted is a plan for display: the values of secret keys are hidden unless they are placeholders.
func redacted(p reconcile.Plan) reconcile.Plan {
	out := p
	out.Actions = make([]reconcile.Action, len(p.Actions))
	for i, a := range p.Actions {
		secret := map[string]bool{}
		a.Changes = append([]reconcile.Change(nil), a.Changes...)
		for j, ch := range a.Changes {
			if ch.Secret {
				secret[ch.Key] = true
				if ch.Old != nil {
					v := reconcile.Redacted(*ch.Old, true)
					a.Changes[j].Old = &v
				}
				if ch.New != nil {
					v := reconcile.Redacted(*ch.New, true)
					a.Changes[j].New = &v
				}
			}
		}
		a.Steps = append([]reconcile.Step(nil), a.Steps...)
		for j, s := range a.Steps {
			if s.Config == nil {
				continue
			}
			cfg := make(map[string]string, len(s.Config))
			for k, v := range s.Config {
				if secret[k] {
					v = reconcile.Redacted(v, true)
				}
				cfg[k] = v
			}
			a.Steps[j].Config = cfg
		}
		out.Actions[i] = a
	}
	return out
}
