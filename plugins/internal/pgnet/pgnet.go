// Package pgnet routes a guest's PostgreSQL connections through the worker: pgx dials with
// sdk.Dial, which connects only to what plugin.net.allow grants and resolves names in the host
// (so the guest's resolver is not asked), and sessions use UTC, the time zone of Connect's Date,
// Time and Timestamp values. The JDBC and Debezium connectors share it.
package pgnet

import (
	"context"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

// DefaultConnectTimeout bounds a connection attempt whose config names no connect_timeout.
const DefaultConnectTimeout = 10 * time.Second

// Route makes c's connections go through the worker's granted network.
func Route(c *pgconn.Config) {
	c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) { return sdk.Dial(ctx, network, addr) }
	c.LookupFunc = func(_ context.Context, host string) ([]string, error) { return []string{host}, nil }
	if c.RuntimeParams == nil {
		c.RuntimeParams = map[string]string{}
	}
	c.RuntimeParams["timezone"] = "UTC"
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
}
