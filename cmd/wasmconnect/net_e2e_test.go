//go:build e2e

package main

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/wasmhost/pluginbuild"
)

// TestPluginNetworkIsGranted runs the netprobe test plugin in a worker whose plugin.net.allow
// grants one loopback port: a connector that dials it runs and its traffic shows in the worker's
// metrics; one that dials another port fails with a trace naming the address and the grant; one
// whose own plugin.net.allow narrows the grant to another port cannot reach the granted one; one
// whose own plugin.net.allow reaches beyond the worker's is refused.
func TestPluginNetworkIsGranted(t *testing.T) {
	netprobe, err := pluginbuild.Dir("plugins/testdata/netprobe")
	if err != nil {
		t.Fatal(err)
	}
	granted, other, outside := echoListener(t), echoListener(t), echoListener(t)
	grant := granted + ", " + other
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{
		"plugin.path":      pluginDir + "," + netprobe,
		"plugin.net.allow": grant,
	})
	config := func(address string, extra map[string]string) map[string]string {
		cfg := map[string]string{"connector.class": "NetProbe", "mode": "echo", "address": address,
			"topic": "netprobe", "poll.interval.ms": "100"}
		for k, v := range extra {
			cfg[k] = v
		}
		return cfg
	}
	probe := func(name, address string, extra map[string]string) {
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": name, "config": config(address, extra)})
	}
	probe("net-granted", granted, nil)
	probe("net-refused", outside, nil)
	probe("net-narrowed", granted, map[string]string{"plugin.net.allow": other})

	for name, want := range map[string]string{
		"net-refused":  fmt.Sprintf("plugin.net.allow does not grant %s (granted: %s)", outside, grant),
		"net-narrowed": fmt.Sprintf("plugin.net.allow does not grant %s (granted: %s; narrowed by the connector's plugin.net.allow to: %s)", granted, grant, other),
	} {
		s := w.waitTaskState(t, name, "FAILED", time.Minute)
		if !strings.Contains(s.Tasks[0].Trace, want) {
			t.Errorf("%s: trace lacks %q:\n%s", name, want, s.Tasks[0].Trace)
		}
	}
	// A connector's plugin.net.allow that reaches beyond the worker's is refused at /validate, and
	// so at creation.
	wide := config(outside, map[string]string{"plugin.net.allow": granted + "," + outside, "name": "net-wide"})
	want := fmt.Sprintf("Invalid value %s,%s for configuration plugin.net.allow: a connector's plugin.net.allow may only narrow the worker's (%s), and %s is not within it",
		granted, outside, grant, outside)
	if body := string(w.mustCall(t, 200, "PUT", "/connector-plugins/NetProbe/config/validate", wide)); !strings.Contains(body, `"error_count":1`) || !strings.Contains(body, want) {
		t.Errorf("validate: %s\nwant %s", body, want)
	}
	if code, body := w.call(t, "POST", "/connectors", map[string]any{"name": "net-wide", "config": wide}); code != 400 || !strings.Contains(string(body), want) {
		t.Errorf("POST net-wide: %d %s", code, body)
	}
	w.waitTaskState(t, "net-granted", "RUNNING", time.Minute)
	waitFor(t, time.Minute, "net-granted's echoes in wasmconnect_plugin_net_received_bytes_total", func() bool {
		return connectorMetric(t, w, "wasmconnect_plugin_net_received_bytes_total", "net-granted") >= 3*len("ping 1\n")
	})
	if s := w.mustStatus(t, "net-granted"); s.Tasks[0].State != "RUNNING" {
		t.Fatalf("net-granted: %+v", s)
	}
}

// TestPluginNetworkMetrics checks a connector's network series on /metrics: the connections it
// holds open, the bytes it sent and received, and the dials that failed (an HTTP sink whose API is
// down, which retries and keeps running), and that a deleted connector's series go.
func TestPluginNetworkMetrics(t *testing.T) {
	netprobe, err := pluginbuild.Dir("plugins/testdata/netprobe")
	if err != nil {
		t.Fatal(err)
	}
	echo, down := echoListener(t), fmt.Sprintf("127.0.0.1:%d", freePort(t))
	_, addr := startBroker(t)
	produceIDs(t, addr, "events", 1)
	w := startWorker(t, "worker", addr, map[string]string{
		"plugin.path":      pluginDir + "," + netprobe,
		"plugin.net.allow": echo + "," + down,
	})
	for name, cfg := range map[string]map[string]string{
		"echoing": {"connector.class": "NetProbe", "mode": "echo", "address": echo, "topic": "netprobe", "poll.interval.ms": "50"},
		"holding": {"connector.class": "NetProbe", "mode": "hold", "address": echo, "topic": "netprobe"},
		"api-down": {"connector.class": "HttpSink", "topics": "events", "http.api.url": "http://" + down, "max.retries": "1000",
			"retry.backoff.ms": "50", "value.converter": "org.apache.kafka.connect.json.JsonConverter", "value.converter.schemas.enable": "false"},
	} {
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
	}
	metric := func(name, connector string) func() bool {
		return func() bool { return connectorMetric(t, w, name, connector) >= 1 }
	}
	ping := len("ping 1\n")
	waitFor(t, time.Minute, "echoing's bytes", func() bool {
		return connectorMetric(t, w, "wasmconnect_plugin_net_sent_bytes_total", "echoing") >= 3*ping &&
			connectorMetric(t, w, "wasmconnect_plugin_net_received_bytes_total", "echoing") >= 3*ping
	})
	waitFor(t, time.Minute, "holding's open connection", metric("wasmconnect_plugin_net_connections_open", "holding"))
	waitFor(t, time.Minute, "api-down's failed dials", metric("wasmconnect_plugin_net_dial_errors_total", "api-down"))
	if s := w.mustStatus(t, "api-down"); s.Tasks[0].State != "RUNNING" {
		t.Errorf("api-down: %+v", s.Tasks[0])
	}
	w.mustCall(t, 204, "DELETE", "/connectors/holding", nil)
	waitFor(t, time.Minute, "holding's series to go", func() bool {
		return !strings.Contains(string(w.mustCall(t, 200, "GET", "/metrics", nil)), `connector="holding"`)
	})
}

// echoListener listens on a loopback port, echoes every line, and returns its address.
func echoListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(line))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// connectorMetric reads the series name{connector="connector"} of a worker's GET /metrics; 0 when
// it is not there (yet).
func connectorMetric(t *testing.T, w *worker, name, connector string) int {
	t.Helper()
	label := fmt.Sprintf(`connector=%q`, connector)
	for _, line := range strings.Split(string(w.mustCall(t, 200, "GET", "/metrics", nil)), "\n") {
		if strings.HasPrefix(line, name+"{") && strings.Contains(line, label) {
			var v float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &v)
			return int(v)
		}
	}
	return 0
}
