// Command http is the HTTP sink plugin module: Confluent's HTTP Sink connector
// (io.confluent.connect.http.HttpSinkConnector, also HttpSink and HttpSinkConnector) as a
// wasmconnect plugin, with its config keys, so that an existing connector config works unchanged.
//
// It sends record values to http.api.url with request.method (POST, PUT or PATCH), the headers of
// headers, and basic (auth.type=BASIC, connection.user, connection.password) or bearer
// (auth.type=BEARER, bearer.token) authentication. batch.max.size records go in one request: as a
// JSON array with batch.json.as.array=true, else joined with batch.separator between batch.prefix
// and batch.suffix; with the default of 1, one record per request. Values are sent as their text
// (request.body.format=string) or as JSON (json): a JsonConverter value as its payload, a string as
// a JSON string, bytes as base64, as JsonConverter writes them.
//
// Responses with a status of retry.on.status.codes (408, 429 and 5xx by default), timeouts
// (http.request.timeout.ms) and connection errors are retried up to max.retries times, with an
// exponential backoff from retry.backoff.ms. Any other status that is not 2xx rejects the records of
// the request: the task fails, or with errors.tolerance=all the worker puts the batch again one
// record at a time and the rejected records go to the dead letter queue, the response's status and
// body in their __connect.errors.exception.message header.
//
// Each request that succeeded is sent once: the task remembers the records it delivered until they
// are flushed, and skips them when the worker puts them again (to find the rejected records of a
// batch, or after a retriable error). One PUT spends at most putBudget (under the worker's
// plugin.call.timeout.ms of 30 s by default); a PUT whose server is slow or keeps failing returns a
// retriable error when it runs out, and the worker puts the rest again after its backoff.
//
// The plugin reaches the network through the worker's plugin.net.allow grant (sdk.Dial as the
// http.Transport's DialContext), so the operator must grant the API's host and port.
//
// Not supported (each a clear error): https (the guest has no trust store yet), auth.type=OAUTH2,
// proxies, and behavior.on.null.values=delete; URL templates (${topic}, ${key}) are sent as they
// are written.
//
// Build: GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o http.wasm ./plugins/http
package main

import (
	sdk "github.com/wasmconnect/wasmconnect/sdk/go"
)

const version = "1.0.0"

func init() {
	sdk.RegisterSink(sdk.Info{
		Name:    "HttpSink",
		Class:   "io.confluent.connect.http.HttpSinkConnector",
		Aliases: []string{"HttpSinkConnector"},
		Version: version,
		Config:  configDefs,
	}, connector{})
}

func main() {}

type connector struct{}

func (connector) Validate(cfg sdk.Config) map[string][]string {
	_, errs := parseSettings(cfg)
	return errs
}

// TaskConfigs gives every task the connector's config: each task sends the records of its own
// partitions.
func (connector) TaskConfigs(cfg sdk.Config, maxTasks int) ([]sdk.Config, error) {
	if _, errs := parseSettings(cfg); len(errs) > 0 {
		return nil, settingsError(errs)
	}
	out := make([]sdk.Config, max(maxTasks, 1))
	for i := range out {
		out[i] = cfg.Clone()
	}
	return out, nil
}

func (connector) NewTask() sdk.SinkTask { return &task{} }
