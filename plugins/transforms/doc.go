// Command transforms is the module of Kafka Connect's standard single message transforms and
// predicates (org.apache.kafka.connect.transforms), built to one WebAssembly module so that a task's
// whole chain shares one instance:
//
//	Cast, ExtractField, Flatten, HeaderFrom, HoistField, InsertField, MaskField, ReplaceField,
//	SetSchemaMetadata, TimestampConverter ($Key and $Value each); DropHeaders, Filter, InsertHeader,
//	RegexRouter, TimestampRouter, ValueToKey; predicates HasHeaderKey, RecordIsTombstone and
//	TopicNameMatches.
//
// Each is registered under Kafka's class name (org.apache.kafka.connect.transforms.InsertField$Value)
// with its short name (InsertField$Value) and Kafka's config keys, and behaves as Kafka's on
// schemaless values (maps) and on values with a schema (structs, schemas updated as Kafka updates
// them). Values are read and written with the SDK's Connect data model (sdk/go/connect).
//
// Performance: a wasm guest pays for every value it decodes, so InsertField and MaskField rewrite
// struct payloads as text where the result is the same (tests compare both paths), and RegexRouter
// and TopicNameMatches remember their result per topic. BenchmarkChain in wasm_test.go measures a
// chain through the real host.
//
// Differences from Kafka: Java's SimpleDateFormat patterns are translated to Go's time layouts for
// the common letters (y M d H h m s S E a z Z X and quoted text); Java regular expressions are run
// by Go's regexp (RE2: no backreferences or lookaround); InsertHeader parses value.literal as
// booleans, numbers, null and strings (not Kafka's lists and maps).
//
// Build:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags='-s -w' -o build/plugins/transforms.wasm ./plugins/transforms
package main
