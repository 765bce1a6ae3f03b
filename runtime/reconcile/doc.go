// Package reconcile keeps a Kafka Connect cluster's connectors equal to the ones declared in a
// directory of HCL files (see package hcl).
//
// The logic is split from the I/O: Diff compares the declared connectors with the cluster's and
// returns a Plan (create, update with the changed keys, pause/resume/stop, delete) without calling
// anything; Apply runs a plan through a Client, each connector on its own so that one failing or
// hanging connector does not hold the others back; Reconciler runs Diff and Apply in a loop inside
// a worker, on the leader only, watching the directory.
//
// Clients: RESTClient speaks Kafka Connect's REST API, so `wasmconnect plan` and `apply` work
// against Apache Kafka Connect too; HerderClient calls the worker's own herder in-process.
//
// Rules that keep the loop from fighting the server (the drift loops of other tools):
//
//   - only declared keys are compared; keys the server adds (name, __internal.*) and keys nobody
//     declared never cause an update, and masked values ("[hidden]", "****") are not compared;
//   - secrets are config-provider placeholders (${env:DB_PASSWORD}), stored and compared as such,
//     never resolved by the reconciler;
//   - ownership is recorded in the connector's config (wasmconnect.managed.by), so only connectors
//     this directory created or adopted are deleted, and REST-created ones are left alone unless
//     pruning is on;
//   - wasmconnect.managed.hash records the declaration last written, which tells a REST change
//     (drift: reverted, or with connectors.drift=report only reported) from a change of the files;
//   - an invalid file changes nothing: the last valid desired state stays in force and the problems
//     are reported with their positions.
package reconcile
