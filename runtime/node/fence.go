package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/wasmconnect/wasmconnect/runtime/rest"
)

// askLeaderToFence sends the internal PUT /connectors/{name}/fence (KIP-618) to the leader, signed
// with the cluster's session key as every request between workers is, and marked forward=true so
// that a worker that is no longer the leader forwards it once more.
func (n *Node) askLeaderToFence(ctx context.Context, leaderURL, connector string) error {
	if n.peers == nil {
		return fmt.Errorf("asking the leader to fence connector %s: the REST client is not ready", connector)
	}
	target := strings.TrimRight(leaderURL, "/") + "/connectors/" + url.PathEscape(connector) + "/fence?forward=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, target, nil)
	if err != nil {
		return fmt.Errorf("asking the leader to fence connector %s: %w", connector, err)
	}
	if key := n.herder.SessionKey(); key != nil {
		rest.SignRequest(req, key, nil)
	}
	resp, err := n.peers.Do(req)
	if err != nil {
		return fmt.Errorf("asking the leader at %s to fence connector %s: %w", leaderURL, connector, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("asking the leader at %s to fence connector %s: %s %s", leaderURL, connector, resp.Status, strings.TrimSpace(string(body)))
	}
	return nil
}
