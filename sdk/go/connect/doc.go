// Package connect is a small model of Kafka Connect's data (org.apache.kafka.connect.data) for Go
// plugins: schemas, structs, and the conversion between a record's key or value on the wire
// (sdk.Data: a string, bytes, or a JSON payload with an optional Connect schema, as JsonConverter
// writes them) and Go values, so that a transformation can read and change fields of schemaless
// values (maps) and of schema-carrying values (Struct) alike.
//
// Decode turns a Data into its schema (nil when schemaless) and a Go value; Encode turns them back.
// Go values by schema type:
//
//	int8, int16, int32, int64     int8, int16, int32, int64 (schemaless JSON integers: int64)
//	float, double                 float32, float64 (schemaless JSON fractions: float64)
//	boolean, string, bytes        bool, string, []byte
//	array                         []any
//	map                           map[string]any when keys are strings (and schemaless objects),
//	                              else []MapEntry
//	struct                        *Struct
//	Date, Time, Timestamp         time.Time (UTC)
//	Decimal                       *big.Rat
//	null                          nil
//
// Schemas are values like Kafka's ConnectSchema: once a Schema has been used (parsed, encoded, put
// in a Struct) do not change it; copy it (Schema.Clone) and change the copy. Decode caches parsed
// schemas by their JSON, so equal schemas decode to the same *Schema and a transformation can cache
// what it derives from a schema by pointer.
//
// This package is the one model of Connect data and the one JSON-with-schema codec: the
// JsonConverter plugin reads and writes payloads with ReadPayload and AppendPayload (with its
// replace.null.with.default and decimal.format settings in PayloadOptions), transformations with
// Decode and Encode, and the host's stores read JSON with DecodeJSON. A fix to how a schema or a
// value is read is made here once and seen by all of them.
package connect
