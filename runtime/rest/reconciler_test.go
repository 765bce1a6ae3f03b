package rest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
)

type reconcilingHerder struct {
	*fakeHerder
}

func (reconcilingHerder) ReconcilerStatus(context.Context) (any, error) {
	return map[string]any{"dir": "connectors", "active": true}, nil
}

func TestReconcilerRoute(t *testing.T) {
	hs := newHarness(t)
	if r := hs.do("GET", "/reconciler", ""); r.code != 200 || !strings.Contains(r.body, `"active":false`) || !strings.Contains(r.body, "connectors.dir is not set") {
		t.Fatalf("without a reconciler: %d %s", r.code, r.body)
	}
	srv := httptest.NewServer(New(reconcilingHerder{newFake()}, WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))))
	defer srv.Close()
	hs.srv = srv
	if r := hs.do("GET", "/reconciler", ""); r.code != 200 || r.body != `{"active":true,"dir":"connectors"}` {
		t.Fatalf("with a reconciler: %d %s", r.code, r.body)
	}
}
