//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/wasmconnect/wasmconnect/runtime/doctor"
)

// doctorReport runs wasmconnect doctor --json on a worker config and returns its report and exit
// code.
func doctorReport(t *testing.T, props string) (doctor.Report, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "doctor", "--json", "--timeout", "2s", "--config", props)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("wasmconnect doctor: %v\n%s", err, stderr.String())
	}
	var r doctor.Report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("wasmconnect doctor --json printed %q (%v); stderr %s", out, err, stderr.String())
	}
	return r, code
}

// wantProblem fails unless the report has a problem of check whose message has every one of
// words, with a fix, and doctor exited with 1.
func wantProblem(t *testing.T, r doctor.Report, code int, check string, words ...string) {
	t.Helper()
	if code != 1 {
		t.Errorf("doctor exited with %d, want 1", code)
	}
	for _, f := range r.Findings {
		if f.Check != check || f.Status != doctor.Problem {
			continue
		}
		all := true
		for _, w := range words {
			all = all && strings.Contains(f.Message, w)
		}
		if all {
			if f.Fix == "" {
				t.Errorf("problem %q has no fix", f.Message)
			}
			return
		}
	}
	b, _ := json.MarshalIndent(r.Findings, "", "  ")
	t.Fatalf("no %s problem mentioning %q in:\n%s", check, words, b)
}

func TestDoctorBrokerDown(t *testing.T) {
	props, _ := writeWorkerProps(t, "lonely", fmt.Sprintf("127.0.0.1:%d", freePort(t)), nil)
	r, code := doctorReport(t, props)
	wantProblem(t, r, code, doctor.CheckBroker, "no broker answers at bootstrap.servers=127.0.0.1:")
	for _, f := range r.Findings {
		if f.Check == doctor.CheckTopics && f.Status != doctor.Skipped {
			t.Errorf("internal topics checked without a broker: %+v", f)
		}
	}
}

func TestDoctorConfigTopicNotCompacted(t *testing.T) {
	_, addr := startBroker(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(context.Background(), 1, 1, map[string]*string{"cleanup.policy": kadm.StringPtr("delete")}, "connect-configs")
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatal(err)
	}
	props, _ := writeWorkerProps(t, "w", addr, nil)
	r, code := doctorReport(t, props)
	wantProblem(t, r, code, doctor.CheckTopics, "config.storage.topic=connect-configs has cleanup.policy=delete")
}

// TestDoctorSettingDiffersFromTheGroup: a healthy worker's doctor finds no problem; a second
// worker's config with another value.converter is told which setting differs and from whom.
func TestDoctorSettingDiffersFromTheGroup(t *testing.T) {
	_, addr := startBroker(t)
	a := startWorker(t, "a", addr, nil)
	propsA, _ := writeWorkerProps(t, "a-again", addr, map[string]string{"listeners": a.url})
	if r, code := doctorReport(t, propsA); code != 0 || r.Problems() != 0 {
		b, _ := json.MarshalIndent(r, "", "  ")
		t.Fatalf("doctor of a healthy worker exited with %d:\n%s", code, b)
	}
	propsB, _ := writeWorkerProps(t, "b", addr, map[string]string{"value.converter": "org.apache.kafka.connect.storage.StringConverter"})
	r, code := doctorReport(t, propsB)
	wantProblem(t, r, code, doctor.CheckSettings,
		"value.converter is org.apache.kafka.connect.storage.StringConverter here but org.apache.kafka.connect.json.JsonConverter on "+a.url)
}

// TestDoctorAdvertisedURLUnreachable: a worker that advertises an address nobody reaches (a
// documentation range, 192.0.2.0/24) answers on its listener only; doctor names both.
func TestDoctorAdvertisedURLUnreachable(t *testing.T) {
	_, addr := startBroker(t)
	props := map[string]string{"rest.advertised.host.name": "192.0.2.1"}
	w := startWorker(t, "w", addr, props)
	props["listeners"] = w.url
	file, _ := writeWorkerProps(t, "w-again", addr, props)
	r, code := doctorReport(t, file)
	wantProblem(t, r, code, doctor.CheckRESTURL, "answers on its listener "+w.url, "but not at its advertised URL http://192.0.2.1:")
	wantProblem(t, r, code, doctor.CheckGroup, "advertises http://192.0.2.1:", "cannot reach")
}

func TestDoctorBrokenModuleInPluginPath(t *testing.T) {
	_, addr := startBroker(t)
	broken := t.TempDir()
	if err := os.WriteFile(filepath.Join(broken, "broken.wasm"), []byte("this is not WebAssembly"), 0o644); err != nil {
		t.Fatal(err)
	}
	props, _ := writeWorkerProps(t, "w", addr, map[string]string{"plugin.path": pluginDir + "," + broken})
	r, code := doctorReport(t, props)
	wantProblem(t, r, code, doctor.CheckPlugins, "module "+filepath.Join(broken, "broken.wasm")+" is not loaded:")
}
