package worker

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmconnect/wasmconnect/wasmhost"
	"github.com/wasmconnect/wasmconnect/wasmhost/netgrant"
	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// workerWithGrant is a worker whose plugin host has plugin.net.allow = grant.
func workerWithGrant(t *testing.T, grant string) *Worker {
	t.Helper()
	g, err := netgrant.Parse(grant)
	if err != nil {
		t.Fatal(err)
	}
	plugins, err := pluginbuild.Dir("plugins/file")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	h, err := wasmhost.New(ctx, wasmhost.Config{PluginPath: []string{plugins}, NetAllow: g,
		CacheDir: filepath.Join(t.TempDir(), "cache"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	w := testWorker(t, Config{})
	w.host = h
	return w
}

// TestValidateNetAllow checks that /validate reports a connector's plugin.net.allow that does not
// parse, or that reaches beyond the worker's grant, and that such a config is refused.
func TestValidateNetAllow(t *testing.T) {
	w := workerWithGrant(t, "127.0.0.1:5432, 10.0.0.0/8:*")
	for _, tc := range []struct{ grant, want string }{
		{"127.0.0.1:5432", ""},
		{"10.1.2.3:443, 10.9.0.0/16:*", ""},
		{"", ""}, // no network at all: narrower still
		{"127.0.0.1:5433", "Invalid value 127.0.0.1:5433 for configuration plugin.net.allow: a connector's plugin.net.allow may only narrow the worker's (127.0.0.1:5432, 10.0.0.0/8:*), and 127.0.0.1:5433 is not within it"},
		{"127.0.0.1:5432, 0.0.0.0/0:*", "and 0.0.0.0/0:* is not within it"},
		{"localhost", `Invalid value localhost for configuration plugin.net.allow: entry "localhost": want host:port, host:*, address:port or range:port`},
	} {
		cfg := map[string]string{"connector.class": "FileStreamSource", "file": "f", "topic": "t", "plugin.net.allow": tc.grant}
		infos, _, err := w.ValidateConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ci := range infos.Configs {
			if ci.Value.Name == "plugin.net.allow" {
				got = ci.Value.Errors
			}
		}
		if tc.want == "" {
			if len(got) != 0 {
				t.Errorf("%q: errors %q", tc.grant, got)
			}
			continue
		}
		if len(got) != 1 || !strings.Contains(got[0], tc.want) {
			t.Errorf("%q: errors %q, want %q", tc.grant, got, tc.want)
		}
		if _, err := w.Validate(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: Validate = %v", tc.grant, err)
		}
	}
	none := workerWithGrant(t, "")
	infos, _, err := none.ValidateConfig(context.Background(), map[string]string{"connector.class": "FileStreamSource", "plugin.net.allow": "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	want := "the worker's plugin.net.allow grants no network at all, so a connector's cannot grant 127.0.0.1:1"
	if m := byName(t, infos)["plugin.net.allow"]; m.Value == nil || len(m.Value.Errors) != 1 || !strings.Contains(m.Value.Errors[0], want) {
		t.Errorf("worker without network: %+v", m.Value)
	}
}
