// Package metrics owns the worker's Prometheus metrics: their names, their labels, and cheap handles
// the herder, the task loops and the plugin host update in their hot paths.
//
// Each worker creates one Registry (a VictoriaMetrics/metrics Set). New registers it for the
// process-wide metrics.WritePrometheus, which GET /metrics serves; Registry.WritePrometheus writes one
// registry alone, so tests can look at a worker's series in isolation (or use Unregistered). Close
// drops everything when the worker stops.
//
// A task gets a *Task from Registry.Task when it starts on this worker and calls Unregister when it
// stops there; a connector the worker leads likewise gets a *Connector, and a worker in a group a
// *Rebalance. Every series of a handle is resolved when the handle is made, so counting records is
// one atomic add; per-batch statistics take a short lock; call histograms are created on an op's
// first call. Handles are nil-safe: a nil *Task or *Connector ignores every call.
//
// # Names: Kafka Connect's
//
// Kafka Connect exposes its metrics over JMX in the kafka.connect domain (ConnectMetricsRegistry,
// KIP-196); dashboards and alerts read them through the Prometheus JMX exporter. The series here have
// the names that exporter gives them without rewrite rules, as Aiven documents them:
// kafka_connect_<group>_<attribute> with dashes turned into underscores (Kafka(group, attribute)),
// labelled connector and task as the MBeans are tagged, plus worker_id (a constant label of the
// Registry). A string attribute becomes a series of value 1 with the string in a label, as the
// exporter's rules render it: kafka_connect_connector_task_metrics_status{status="running"} 1 (one
// status series at a time, in Kafka's lower-case state names). Strimzi's example rules drop the
// "_metrics" of the group and the "connect_" of the worker groups
// (kafka_connect_worker_connector_count, kafka_connect_source_task_source_record_poll_total,
// kafka_connect_connector_status): Names(StrimziNames) (metrics.names=strimzi) names them so.
//
//	group (labels)                          attributes
//	connect-worker-metrics                  connector-count, task-count,
//	                                        connector-startup-{attempts,success,failure}-total,
//	                                        connector-startup-{success,failure}-percentage, and task-startup-*
//	connect-worker-metrics (connector)      connector-{total,running,paused,failed,unassigned,destroyed,restarting}-task-count
//	connect-worker-rebalance-metrics        completed-rebalances-total, epoch, rebalancing,
//	                                        rebalance-{avg,max}-time-ms, time-since-last-rebalance-ms
//	connector-metrics (connector)           status, connector-class, connector-type, connector-version
//	connector-task-metrics (connector,task) status, running-ratio, pause-ratio, batch-size-{avg,max},
//	                                        offset-commit-{avg,max}-time-ms, offset-commit-{success,failure}-percentage
//	source-task-metrics (connector,task)    source-record-{poll,write}-{total,rate},
//	                                        source-record-active-count{,-avg,-max}, poll-batch-{avg,max}-time-ms
//	sink-task-metrics (connector,task)      sink-record-{read,send}-{total,rate}, sink-record-active-count{,-avg,-max},
//	                                        put-batch-{avg,max}-time-ms, offset-commit-{completion,skip}-{total,rate},
//	                                        offset-commit-seq-no, partition-count
//	task-error-metrics (connector,task)     total-record-failures, total-record-errors, total-records-skipped,
//	                                        total-retries, total-errors-logged, deadletterqueue-produce-{requests,failures},
//	                                        last-error-timestamp
//
// The values keep Kafka's meaning: rates are per second, averages and maxima cover a sliding window
// of two 30 s samples (Kafka's metrics.num.samples and metrics.sample.window.ms defaults), the
// "percentages" are fractions from 0 to 1 as Kafka's Frequencies report them, running-ratio and
// pause-ratio are shares of the time since the task started here, times are in milliseconds. Where
// Kafka reports NaN for an empty window, these report 0. "Poll" counts records the guest returned
// from POLL, before transforms; "write" counts records Kafka acknowledged; "read" counts records
// consumed; "send" counts records handed to the guest's PUT after transforms. The source active
// count is the records in flight: handed to the producer, not yet acknowledged; the sink active
// count is the records read whose offsets are not committed yet. In wasmconnect the group leader
// runs every connector (it generates their task configs), so connector-metrics and the connector
// startups are on the leader.
//
// # Names: wasmconnect's own
//
// Where Kafka Connect has nothing, the series are wasmconnect_*, in Prometheus style (snake case,
// _total on counters, base units):
//
//	wasmconnect_plugin_call_duration_seconds{connector,task,plugin,op}  histogram of wc_call durations; _count is the calls
//	wasmconnect_plugin_fuel_consumed_total{connector,task,plugin}        guest work: WebAssembly instructions run (an upper bound)
//	wasmconnect_plugin_traps_total{connector,task,plugin}                calls that trapped or ran out of time
//	wasmconnect_plugin_memory_bytes{connector,task,module}               the task's instance's linear memory
//	wasmconnect_plugin_module_instances{module}                          live instances of a module on this worker
//	wasmconnect_sink_task_records_lag{connector,task}                    records behind the log end, over the task's partitions
//	wasmconnect_plugin_net_*{connector}                                  the plugins' network capability (Registry.Net)
//
// The op label is the ABI op in lower case (sdk/ABI.md §4): open, close, poll, commit, put, flush,
// from_connect, to_connect, transform, test. The plugin label is the plugin's name, the module label
// its .wasm file. The call histograms have le buckets (CallBuckets), which histogram_quantile reads
// in Prometheus and VictoriaMetrics alike.
package metrics
