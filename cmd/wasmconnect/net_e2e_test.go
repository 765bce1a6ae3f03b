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
// whose own plugin.net.allow narrows the grant to another port cannot reach the granted one.
func TestPluginNetworkIsGranted(t *testing.T) {
	netprobe, err := pluginbuild.Dir("plugins/testdata/netprobe")
	if err != nil {
		t.Fatal(err)
	}
	granted, other := echoListener(t), echoListener(t)
	_, addr := startBroker(t)
	w := startWorker(t, "worker", addr, map[string]string{
		"plugin.path":      pluginDir + "," + netprobe,
		"plugin.net.allow": granted,
	})
	probe := func(name, address string, extra map[string]string) {
		cfg := map[string]string{"connector.class": "NetProbe", "mode": "echo", "address": address,
			"topic": "netprobe", "poll.interval.ms": "100"}
		for k, v := range extra {
			cfg[k] = v
		}
		w.mustCall(t, 201, "POST", "/connectors", map[string]any{"name": name, "config": cfg})
	}
	probe("net-granted", granted, nil)
	probe("net-refused", other, nil)
	probe("net-narrowed", granted, map[string]string{"plugin.net.allow": other})

	for name, want := range map[string]string{
		"net-refused":  fmt.Sprintf("plugin.net.allow does not grant %s (granted: %s)", other, granted),
		"net-narrowed": fmt.Sprintf("plugin.net.allow does not grant %s (granted: %s; narrowed by the connector's plugin.net.allow to: %s)", granted, granted, other),
	} {
		s := w.waitTaskState(t, name, "FAILED", time.Minute)
		if !strings.Contains(s.Tasks[0].Trace, want) {
			t.Errorf("%s: trace lacks %q:\n%s", name, want, s.Tasks[0].Trace)
		}
	}
	w.waitTaskState(t, "net-granted", "RUNNING", time.Minute)
	waitFor(t, time.Minute, "net-granted's echoes in wasmconnect_net_received_bytes_total", func() bool {
		return connectorMetric(t, w, "wasmconnect_net_received_bytes_total", "net-granted") >= 3*len("ping 1\n")
	})
	if s := w.mustStatus(t, "net-granted"); s.Tasks[0].State != "RUNNING" {
		t.Fatalf("net-granted: %+v", s)
	}
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
