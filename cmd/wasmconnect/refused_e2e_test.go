//go:build e2e

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A connector config that its tasks could not honour is a 400 from create and an error from
// validate, naming the key, and nothing is created: a transformation's predicate that no
// predicates alias declares (it used to fail only when the task started), and a header.converter
// other than the one the tasks use (it used to be accepted and ignored).
func TestConfigsTasksCannotHonourAreRefused(t *testing.T) {
	_, addr := startBroker(t)
	files := t.TempDir()
	w := startWorker(t, "worker", addr, map[string]string{"plugin.fs.allow": files})
	for _, tc := range []struct {
		name, key, want string
		extra           map[string]string
	}{
		{"undeclared-predicate", "transforms.drop.predicate", "no predicate with that alias is declared in predicates",
			map[string]string{"transforms": "drop", "transforms.drop.type": "Filter", "transforms.drop.predicate": "nope"}},
		{"unknown-header-converter", "header.converter", "Not a HeaderConverter this worker honours",
			map[string]string{"header.converter": "com.example.AvroHeaderConverter"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := map[string]string{"connector.class": "FileStreamSource", "file": filepath.Join(files, "in"), "topic": "t"}
			for k, v := range tc.extra {
				cfg[k] = v
			}
			code, b := w.call(t, "POST", "/connectors", map[string]any{"name": tc.name, "config": cfg})
			if code != 400 || !strings.Contains(string(b), tc.key) || !strings.Contains(string(b), tc.want) {
				t.Errorf("create: %d %s, want a 400 naming %s", code, b, tc.key)
			}
			if code, _ := w.call(t, "GET", "/connectors/"+tc.name, nil); code != 404 {
				t.Errorf("GET /connectors/%s after the refused create: %d, want 404", tc.name, code)
			}
			var infos struct {
				ErrorCount int `json:"error_count"`
				Configs    []struct {
					Value struct {
						Name   string   `json:"name"`
						Errors []string `json:"errors"`
					} `json:"value"`
				} `json:"configs"`
			}
			cfg["name"] = tc.name
			b = w.mustCall(t, 200, "PUT", "/connector-plugins/FileStreamSource/config/validate", cfg)
			if err := json.Unmarshal(b, &infos); err != nil {
				t.Fatal(err)
			}
			var errs []string
			for _, c := range infos.Configs {
				if c.Value.Name == tc.key {
					errs = c.Value.Errors
				}
			}
			if infos.ErrorCount != 1 || len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
				t.Errorf("validate: %d errors, %s: %q; want one naming it: %s", infos.ErrorCount, tc.key, errs, b)
			}
		})
	}
}
