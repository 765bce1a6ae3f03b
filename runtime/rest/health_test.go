package rest

import (
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// GET /health answers everyone, for liveness probes, but the checks behind its status name members
// and carry raw errors: only a client that may read the API sees them, and with authentication on
// that is an authenticated reader, never a client without credentials.
func TestHealthDetailsOnlyForReaders(t *testing.T) {
	health := connect.Health{
		Status: connect.HealthUnhealthy,
		Detail: "The worker has no work from its group.",
		Checks: []connect.HealthCheck{{Name: "group", Status: connect.CheckFailed,
			Detail: "member connect-w4-1a2b3c of group connect-cluster: value.converter is StringConverter on this worker but JsonConverter in the group"}},
	}
	const public = `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests. The worker has no work from its group."}`
	const withChecks = `{"status":"unhealthy","message":"Worker was unable to handle this request and may be unable to handle other requests. The worker has no work from its group.",` +
		`"checks":[{"name":"group","status":"failed","detail":"member connect-w4-1a2b3c of group connect-cluster: value.converter is StringConverter on this worker but JsonConverter in the group"}]}`

	// Without authentication every client reads the whole API, checks included.
	open := newHarness(t)
	open.h.health = health
	open.expect("GET", "/health", "", 500, withChecks)

	auth := testAuth(t)
	for _, anonymousRead := range []bool{false, true} {
		hs := newHarness(t, WithAuth(auth), WithAnonymousRead(anonymousRead))
		hs.h.health = health
		for _, c := range []struct {
			who  string
			hdr  map[string][]string
			want string
		}{
			{"no credentials", nil, public},
			{"wrong password", basic("bob", "wrong"), public},
			{"unknown token", bearer("nope-nope-nope-nope-nope"), public},
			{"read user", basic("bob", "bob-pw"), withChecks},
			{"read token", bearer(readToken), withChecks},
			{"admin user", basic("alice", "alice-pw"), withChecks},
		} {
			r := hs.send("GET", "/health", "", c.hdr)
			if r.code != 500 || r.body != c.want {
				t.Errorf("anonymous read %v, %s: got %d %s\nwant 500 %s", anonymousRead, c.who, r.code, r.body, c.want)
			}
			if c.want == public && (strings.Contains(r.body, "connect-w4") || strings.Contains(r.body, "value.converter")) {
				t.Errorf("anonymous read %v, %s: internals leaked: %s", anonymousRead, c.who, r.body)
			}
		}
	}
}
