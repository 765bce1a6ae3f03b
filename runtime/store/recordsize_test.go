package store

import (
	"errors"
	"strings"
	"testing"
)

// A write the config topic cannot hold is refused before anything is sent, whole: creating a
// connector whose config is over max.message.bytes leaves no target state behind, and the error
// carries both sizes. A record up to the topic's own limit is written, though kgo's default batch
// limit is a little lower.
func TestOversizedInputIsRefusedBeforeWriting(t *testing.T) {
	e := newEnv(t)
	s := startConfigStore(t, e)

	big := map[string]string{"name": "big", "blob": strings.Repeat("x", DefaultMaxMessageBytes)}
	err := s.CreateConnector(e.ctx, "big", big, TargetPaused)
	var tooLarge *RecordTooLargeError
	if !errors.As(err, &tooLarge) {
		t.Fatalf("creating an oversized connector: %v, want a RecordTooLargeError", err)
	}
	if tooLarge.Limit != DefaultMaxMessageBytes || tooLarge.Size <= tooLarge.Limit ||
		tooLarge.Setting != "max.message.bytes of topic "+configsTopic || tooLarge.Err != nil {
		t.Errorf("error %+v", tooLarge)
	}
	if msg := err.Error(); !strings.Contains(msg, "1048588 bytes") || !strings.Contains(msg, "max.message.bytes") {
		t.Errorf("message %q names neither the limit nor the setting", msg)
	}

	err = s.PutTaskConfigs(e.ctx, "big", []map[string]string{{"t": "0"}, {"blob": big["blob"]}})
	if !errors.As(err, &tooLarge) {
		t.Fatalf("writing oversized task configs: %v, want a RecordTooLargeError", err)
	}
	if got := e.records(configsTopic); len(got) != 0 {
		t.Fatalf("refused writes left %d records in the topic, starting with key %q", len(got), got[0].Key)
	}

	// Just under the topic's limit (and over kgo's default batch size of 1000012 bytes) fits.
	fits := map[string]string{"name": "fits", "blob": strings.Repeat("y", DefaultMaxMessageBytes-200)}
	must(t, s.CreateConnector(e.ctx, "fits", fits, TargetPaused))
	if got := s.Snapshot().Connectors["fits"]["blob"]; len(got) != len(fits["blob"]) {
		t.Errorf("read back a blob of %d bytes, want %d", len(got), len(fits["blob"]))
	}
}
