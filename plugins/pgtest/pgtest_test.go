package pgtest_test

import (
	"context"
	"testing"

	"github.com/wasmconnect/wasmconnect/plugins/pgtest"
)

// TestStartServesSQLWithSettings starts a real server with wal_level=logical (the setting a CDC
// connector needs), runs SQL on it and checks the setting took.
func TestStartServesSQLWithSettings(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{Settings: map[string]string{"wal_level": "logical"}})
	c := srv.Connect(t)
	var level string
	if err := c.QueryRow(context.Background(), "SHOW wal_level").Scan(&level); err != nil {
		t.Fatal(err)
	}
	if level != "logical" {
		t.Errorf("wal_level %q, want logical", level)
	}
	srv.Exec(t, "CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2)")
	var n int
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2 {
		t.Fatalf("count %d, %v", n, err)
	}
	if out, err := srv.Psql("-c", "SELECT 1").CombinedOutput(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out)
	}
}
