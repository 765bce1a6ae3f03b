package rest

import (
	"context"
	"net/http"

	"github.com/wasmconnect/wasmconnect/runtime/connect"
)

// Unimplemented answers 501 Not Implemented for the Herder methods added with PATCH config, topics,
// offsets, plugin config, validation and loggers, so that a test herder with only the older methods
// satisfies Herder by embedding it; its own methods take precedence.
type Unimplemented struct{}

func notImplemented(what string) error {
	return &connect.Error{Code: http.StatusNotImplemented, Message: what + " is not implemented by this worker yet"}
}

func (Unimplemented) PatchConnectorConfig(context.Context, string, map[string]*string) (connect.ConnectorInfo, error) {
	return connect.ConnectorInfo{}, notImplemented("PATCH /connectors/{name}/config")
}

func (Unimplemented) ConnectorTopics(context.Context, string) ([]string, error) {
	return nil, notImplemented("GET /connectors/{name}/topics")
}

func (Unimplemented) FenceZombies(context.Context, string) error {
	return notImplemented("PUT /connectors/{name}/fence")
}

func (Unimplemented) ResetConnectorTopics(context.Context, string) error {
	return notImplemented("PUT /connectors/{name}/topics/reset")
}

func (Unimplemented) ConnectorOffsets(context.Context, string) (connect.ConnectorOffsets, error) {
	return connect.ConnectorOffsets{}, notImplemented("GET /connectors/{name}/offsets")
}

func (Unimplemented) AlterConnectorOffsets(context.Context, string, []connect.ConnectorOffset) (connect.Message, error) {
	return connect.Message{}, notImplemented("PATCH /connectors/{name}/offsets")
}

func (Unimplemented) ResetConnectorOffsets(context.Context, string) (connect.Message, error) {
	return connect.Message{}, notImplemented("DELETE /connectors/{name}/offsets")
}

func (Unimplemented) PluginConfig(context.Context, string) ([]connect.ConfigKeyInfo, error) {
	return nil, notImplemented("GET /connector-plugins/{plugin}/config")
}

func (Unimplemented) ValidateConfig(context.Context, string, map[string]string) (connect.ConfigInfos, error) {
	return connect.ConfigInfos{}, notImplemented("PUT /connector-plugins/{plugin}/config/validate")
}

func (Unimplemented) Loggers(context.Context) (map[string]connect.LoggerLevel, error) {
	return nil, notImplemented("GET /admin/loggers")
}

func (Unimplemented) Logger(context.Context, string) (connect.LoggerLevel, bool, error) {
	return connect.LoggerLevel{}, false, notImplemented("GET /admin/loggers/{name}")
}

func (Unimplemented) SetLogLevel(context.Context, string, string, connect.LogScope) ([]string, error) {
	return nil, notImplemented("PUT /admin/loggers/{name}")
}
