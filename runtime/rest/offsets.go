package rest

import (
	"context"
	"net/http"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// activeTopics is one connector of GET /connectors/{name}/topics: {"name":{"topics":[...]}}.
type activeTopics struct {
	Topics []string `json:"topics"`
}

var (
	errTrackingDisabled = &connect.Error{Code: http.StatusForbidden, Message: "Topic tracking is disabled."}
	errResetDisabled    = &connect.Error{Code: http.StatusForbidden, Message: "Topic tracking reset is disabled."}
)

// GET /connectors/{name}/topics (KIP-558)
func (s *Server) getTopics(ctx context.Context, c call) (response, error) {
	if !s.topicTracking {
		return response{}, errTrackingDisabled
	}
	name := c.ps.ByName("name")
	topics, err := s.h.ConnectorTopics(ctx, name)
	if err != nil {
		return response{}, err
	}
	if topics == nil {
		topics = []string{}
	}
	return ok(map[string]activeTopics{name: {Topics: topics}}), nil
}

// PUT /connectors/{name}/topics/reset: 202.
func (s *Server) resetTopics(ctx context.Context, c call) (response, error) {
	if !s.topicTracking {
		return response{}, errTrackingDisabled
	}
	if !s.topicReset {
		return response{}, errResetDisabled
	}
	if err := s.h.ResetConnectorTopics(ctx, c.ps.ByName("name")); err != nil {
		return response{}, err
	}
	return response{status: http.StatusAccepted}, nil
}

// PUT /connectors/{name}/fence (KIP-618), internal: only another worker's signed request is served,
// as in Kafka, where an unsigned one is a 400 "Internal request missing required signature".
func (s *Server) fenceZombies(ctx context.Context, c call) (response, error) {
	if p, _ := PrincipalFromContext(ctx); s.internalKey != nil && !p.Internal {
		return response{}, connect.BadRequest("Internal request missing required signature")
	}
	if err := s.h.FenceZombies(ctx, c.ps.ByName("name")); err != nil {
		return response{}, err
	}
	return response{status: http.StatusNoContent}, nil
}

// GET /connectors/{name}/offsets (KIP-875)
func (s *Server) getOffsets(ctx context.Context, c call) (response, error) {
	offs, err := s.h.ConnectorOffsets(ctx, c.ps.ByName("name"))
	if err != nil {
		return response{}, err
	}
	return ok(normOffsets(offs)), nil
}

// PATCH /connectors/{name}/offsets: 200 {"message":...}.
func (s *Server) alterOffsets(ctx context.Context, c call) (response, error) {
	offs, err := decodeOffsets(c.body)
	if err != nil {
		return response{}, err
	}
	msg, err := s.h.AlterConnectorOffsets(ctx, c.ps.ByName("name"), offs)
	if err != nil {
		return response{}, err
	}
	return ok(msg), nil
}

// DELETE /connectors/{name}/offsets: 200 {"message":...}.
func (s *Server) resetOffsets(ctx context.Context, c call) (response, error) {
	msg, err := s.h.ResetConnectorOffsets(ctx, c.ps.ByName("name"))
	if err != nil {
		return response{}, err
	}
	return ok(msg), nil
}

// normOffsets gives nil lists and maps their empty JSON form; a nil offset stays null.
func normOffsets(o connect.ConnectorOffsets) connect.ConnectorOffsets {
	out := make([]connect.ConnectorOffset, len(o.Offsets))
	for i, off := range o.Offsets {
		if off.Partition == nil {
			off.Partition = map[string]any{}
		}
		out[i] = off
	}
	return connect.ConnectorOffsets{Offsets: out}
}
