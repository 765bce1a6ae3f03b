package config

import (
	"strconv"
	"strings"
)

// Reconcile is the reconciler of the connectors declared in HCL files.
type Reconcile struct {
	Dir   string // connectors.dir: the directory of *.hcl files ("" = no reconciler)
	Owner string // connectors.owner ("" = the directory's name)
	Prune bool   // connectors.prune (false): delete undeclared connectors that have no owner
	Drift string // connectors.drift: revert (the default) or report
}

var reconcileKeys = []Key{
	{Name: "connectors.dir", Doc: "HCL connector files reconciled into the cluster"},
	{Name: "connectors.owner", Doc: "owner id written on reconciled connectors (default: the directory's name)"},
	{Name: "connectors.prune", Default: "false", Doc: "delete undeclared connectors that have no owner"},
	{Name: "connectors.drift", Default: "revert", Doc: "revert or report REST changes to reconciled connectors"},
}

func parseReconcile(p *parser) Reconcile {
	r := Reconcile{Dir: p.str("connectors.dir"), Owner: p.str("connectors.owner")}
	prune := p.str("connectors.prune")
	if prune == "" {
		prune = declared("connectors.prune")
	}
	b, err := strconv.ParseBool(prune)
	if err != nil {
		p.fail("connectors.prune", prune, "expected true or false")
	}
	r.Prune = b
	switch r.Drift = strings.ToLower(p.str("connectors.drift")); r.Drift {
	case "revert", "report":
	case "":
		r.Drift = declared("connectors.drift")
	default:
		p.fail("connectors.drift", r.Drift, "expected revert or report")
	}
	return r
}
