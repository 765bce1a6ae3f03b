// Package metrics owns the worker's Prometheus metrics: their names, their labels, and cheap handles
// the connector and task loops update in their hot paths.
//
// Each worker creates one Registry (a VictoriaMetrics/metrics Set). New registers it for the
// process-wide metrics.WritePrometheus, which GET /metrics serves; Registry.WritePrometheus writes one
// registry alone, so tests can look at a worker's series in isolation (or use Unregistered). Close
// drops everything when the worker stops.
//
// A task gets a *Task from Registry.Task when it starts on this worker and calls Unregister when it
// stops there; a connector instance likewise gets a *Connector. Every series of a handle is resolved
// when the handle is made, so counting records is one atomic add; guest call histograms are created on
// an op's first call. Handles are nil-safe: a nil *Task or *Connector ignores every call.
//
// # Names
//
// Kafka Connect exposes its metrics over JMX in the kafka.connect domain with connector and task tags
// (ConnectMetricsRegistry, KIP-196). The series here keep Kafka's meaning and tags, in Prometheus style: a
// "wasmconnect_" prefix, snake case, "_total" on counters, base units (seconds), and one gauge per
// state value instead of a string "status" attribute. Rates and averages are left to PromQL (rate(),
// histogram_quantile()).
//
//	wasmconnect series (labels)                                  Kafka Connect (group: attribute)
//	wasmconnect_connector_count                                  connect-worker-metrics: connector-count
//	wasmconnect_task_count                                       connect-worker-metrics: task-count
//	wasmconnect_connector_state{connector,state}                 connector-metrics: status
//	wasmconnect_connector_guest_call_duration_seconds            (none: time in connector code, e.g. op="task_configs")
//	  {connector,op}
//	wasmconnect_task_state{connector,task,state}                 connector-task-metrics: status;
//	                                                             sum by (connector,state) gives
//	                                                             connect-worker-metrics: connector-<state>-task-count
//	wasmconnect_source_records_polled_total{connector,task}      source-task-metrics: source-record-poll-total (-rate)
//	wasmconnect_source_records_written_total{connector,task}     source-task-metrics: source-record-write-total (-rate)
//	wasmconnect_sink_records_read_total{connector,task}          sink-task-metrics: sink-record-read-total (-rate)
//	wasmconnect_sink_records_put_total{connector,task}           sink-task-metrics: sink-record-send-total (-rate)
//	wasmconnect_offset_commits_total{connector,task,result}      connector-task-metrics: offset-commit-{success,failure}-percentage;
//	  result = success | failure | skipped                       sink-task-metrics: offset-commit-completion-total,
//	                                                             offset-commit-skip-total
//	wasmconnect_guest_call_duration_seconds{connector,task,op}   source-task-metrics: poll-batch-{avg,max}-time-ms (op="poll");
//	  (histogram: _bucket{le}, _sum, _count)                     sink-task-metrics: put-batch-{avg,max}-time-ms (op="put");
//	                                                             offset commit time (op="commit", op="flush")
//	wasmconnect_plugin_net_connections_open{connector}           (none: a connector's sockets are its own in Kafka Connect)
//	wasmconnect_plugin_net_received_bytes_total{connector},      the plugins' network capability (Registry.Net), summed
//	  _sent_bytes_total, _dial_errors_total                      over the connector's sessions on this worker
//
// The state label takes Kafka's state names: UNASSIGNED, RUNNING, PAUSED, FAILED, RESTARTING, and for
// connectors also STOPPED. Exactly one state series of a handle is 1 at a time (none for a state it
// cannot have). The op label is the ABI op in lower case (sdk/ABI.md §4): open, close, validate,
// task_configs, poll, commit, put, flush, from_connect, to_connect.
//
// "Polled" counts records the guest returned from POLL, before transforms; "written" counts records
// Kafka acknowledged. "Read" counts records consumed from Kafka; "put" counts records handed to the
// guest's PUT after transforms and filtering, like Kafka's sink-record-send.
//
// Registry options: Label adds a constant label to every series (e.g. worker_id when several workers
// share a process), Unregistered keeps a registry out of the process-wide output.
package metrics
