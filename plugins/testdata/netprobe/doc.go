// Command netprobe is a test-only wasmconnect plugin module (under testdata, so go build ./...
// skips it) whose source connector uses the network capability (sdk.Dial), to test the grant
// (plugin.net.allow) and the bounds on blocked reads (plugins/testdata/nethttp runs net/http and
// crypto/tls on top of it). Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/testplugins/netprobe.wasm ./plugins/testdata/netprobe
//
// NetProbe (class wasmconnect.testing.NetProbeSource) does on every poll what mode says, and emits
// one record on topic whose value says what it got; a failure fails the poll with the error:
//
//   - echo: dials address, writes "ping N\n", reads a line back; the value is that line.
//   - hold: dials address and reads until the connection ends: a read that waits for good.
//   - hostwait: dials address with the raw imports and waits an hour in one net_read, as a guest
//     without the Go SDK's cooperative waits would.
package main
