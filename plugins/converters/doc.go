// Command converters is a wasmconnect plugin module with Kafka Connect's standard converters:
//
//   - JsonConverter (org.apache.kafka.connect.json.JsonConverter): schemas.enable (default true)
//     writes {"schema":...,"payload":...} envelopes and requires exactly those two fields on read;
//     schemas.cache.size, decimal.format (BASE64|NUMERIC) and replace.null.with.default as in Kafka.
//     A string value is written with the schema {"type":"string","optional":false} (what Kafka's
//     FileStreamSource + JsonConverter produce), bytes with {"type":"bytes","optional":true} and
//     base64, a JSON value with its own schema or "schema":null. On read the payload is checked
//     against the schema (primitive types, struct fields, arrays, maps) and normalized as Connect
//     would: defaults for nulls, unknown struct fields dropped, decimals as base64. The schema model
//     and the payload codec are the SDK's (sdk/go/connect), the ones transformations use.
//   - StringConverter (org.apache.kafka.connect.storage.StringConverter): UTF-8 text; a JSON string
//     payload is written unquoted, other JSON as JSON text.
//   - ByteArrayConverter (org.apache.kafka.connect.converters.ByteArrayConverter): bytes pass through;
//     other values are an error, as in Kafka.
//
// Null values are null bytes and back. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/plugins/converters.wasm ./plugins/converters
package main
