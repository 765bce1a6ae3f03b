package worker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/wasmconnect/wasmconnect/runtime/config"
)

// Kafka's exactly-once preflight checks on create and /validate: a plugin cannot declare exactly-once
// support nor define transaction boundaries, so "required" and "connector" are refused with Kafka's
// messages; a worker without exactly-once support refuses "required" with its own.
func TestValidateExactlyOnceRules(t *testing.T) {
	src := map[string]string{"name": "src", "connector.class": "FileStreamSource", "file": "/f", "topic": "a"}
	for _, tc := range []struct {
		eos  config.ExactlyOnce
		cfg  map[string]string
		key  string
		want []string
	}{
		{config.ExactlyOnceDisabled, map[string]string{"exactly.once.support": "required"}, "exactly.once.support", []string{errWorkerNotExactlyOnce}},
		{config.ExactlyOnceEnabled, map[string]string{"exactly.once.support": "REQUIRED"}, "exactly.once.support", []string{errNoPreflight}},
		{config.ExactlyOnceEnabled, map[string]string{"exactly.once.support": "requested"}, "exactly.once.support", nil},
		{config.ExactlyOnceEnabled, map[string]string{"transaction.boundary": "connector"}, "transaction.boundary", []string{errNoConnectorBoundaries}},
		{config.ExactlyOnceDisabled, map[string]string{"transaction.boundary": "connector"}, "transaction.boundary", nil},
		{config.ExactlyOnceEnabled, map[string]string{"transaction.boundary": "interval"}, "transaction.boundary", nil},
	} {
		w := testWorker(t, Config{Worker: &config.Worker{
			GroupID: "connect-cluster", KeyConverter: "StringConverter", ValueConverter: "StringConverter",
			OffsetFlushInterval: time.Second, OffsetFlushTimeout: time.Second, ExactlyOnceSource: tc.eos,
		}})
		infos, _, err := w.ValidateConfig(context.Background(), merged(src, tc.cfg))
		if err != nil {
			t.Fatal(err)
		}
		if got := byName(t, infos)[tc.key].Value.Errors; !slices.Equal(got, tc.want) {
			t.Errorf("%s with %v: %s errors\n got %q\nwant %q", tc.eos, tc.cfg, tc.key, got, tc.want)
		}
	}
}

func TestTransactionsOf(t *testing.T) {
	w := testWorker(t, Config{})
	for cfg, want := range map[string]string{
		"poll": "", "interval": "", "connector": "transaction.boundary=connector: " + errNoConnectorBoundaries,
		"sometimes": `transaction.boundary: "sometimes" is not one of poll, interval, connector`,
	} {
		tx, err := w.transactionsOf(map[string]string{"transaction.boundary": cfg, "transaction.boundary.interval.ms": "250"}, nil)
		switch {
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("%s: error %v, want %s", cfg, err, want)
		case want == "" && err != nil:
			t.Errorf("%s: %v", cfg, err)
		case cfg == "interval" && (tx.Boundary != "interval" || tx.Interval != 250*time.Millisecond):
			t.Errorf("interval: %+v", tx)
		}
	}
}
