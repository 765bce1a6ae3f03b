// Command file is a wasmconnect plugin module with Kafka's FileStream connectors:
//
//   - FileStreamSource (org.apache.kafka.connect.file.FileStreamSourceConnector) reads the lines of
//     file into topic, batch.size lines per poll at most, as STRING values with null keys. Its source
//     partition is {"filename": file} and its offset {"position": byte position after the line}, as
//     in Kafka, so a restarted task resumes where the stored offset says. It waits for a file that does
//     not exist yet and for the newline of a partial last line, and never blocks in Poll. Unlike Kafka,
//     file is required: a sandboxed plugin has no standard input.
//   - FileStreamSink (org.apache.kafka.connect.file.FileStreamSinkConnector) appends the text form of
//     each value plus a newline to file, and flushes and syncs it on FLUSH.
//
// Both connectors run one task, as in Kafka. The file must lie in a directory granted by the worker
// setting plugin.fs.allow. Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/plugins/file.wasm ./plugins/file
package main
