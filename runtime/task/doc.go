// Package task runs the data-moving loops of Kafka Connect tasks whose plugin code lives in
// WebAssembly:
//
//	source: plugin POLL -> key/value converters (FROM_CONNECT) -> Kafka producer -> on ack, the
//	        batch's source offsets become committable -> periodic offset flush, then plugin COMMIT
//	sink:   Kafka consumer (group connect-<connector>) -> converters (TO_CONNECT) -> plugin PUT ->
//	        periodic plugin FLUSH, then consumer offsets committed
//
// Every call into a plugin carries a batch, never a single record, because a call across the
// WebAssembly boundary costs far more than handling one record on either side.
//
// The package knows Kafka (franz-go) and the ABI's wire types, but not how plugins are loaded or how
// the worker decides which tasks to run: it gets its plugin objects, converters and offset store
// from the caller through small interfaces, and reports state changes through a callback.
package task
