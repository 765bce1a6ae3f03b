// Package cluster makes a worker a member of a Kafka Connect cluster: the workers sharing a
// group.id form one classic consumer-protocol group with protocol type "connect", elect a
// leader, and split the connectors and tasks between them. It speaks the same bytes as Apache
// Kafka Connect's WorkerCoordinator, so wasmconnect and Java workers can share a group.
//
// It owns group membership and nothing else. It knows nothing of plugins, REST or the internal
// topics: what is configured comes from a Handler (Handler.LeaderSnapshot), and the work is
// started and stopped by the Handler (OnAssigned, OnRevoked). The herder is the intended
// Handler.
//
// # Layout
//
//   - protocol.go: the codec for member metadata and assignments, versions 0 to 2 (Kafka's
//     ConnectProtocol and IncrementalCooperativeConnectProtocol), plus the wasmconnect extension. Pure.
//   - assignor.go: Kafka's eager and incremental cooperative assignors as one pure function
//     with explicit state (assign, coopState): no clock, no I/O, tested with tables and
//     randomized simulations.
//   - settings.go: the settings every worker of a cluster must share.
//   - member.go: the group loop (JoinGroup, SyncGroup, Heartbeat, LeaveGroup with kmsg requests
//     through a *kgo.Client, which finds the coordinator and follows it when it moves).
//
// # Protocol
//
// A worker offers the sub-protocols of its connect.protocol (sessioned, compatible, default);
// the coordinator picks one that every member supports, so one eager worker pulls the group
// to "default" (eager rebalancing: every worker stops everything before each rebalance), as in
// Kafka. With "compatible" and "sessioned" (incremental cooperative rebalancing, KIP-415) a
// worker keeps running its work through a rebalance and stops only what the leader revokes;
// after a revocation it rejoins at once, and revoked work is handed out in that second round,
// so no connector or task ever runs on two workers at the same time. The Member also enforces
// that during a switch from cooperative to eager: a worker that joined with its work running
// stops it and rejoins before the eager assignment.
//
// The leader runs the assignor (Java's IncrementalCooperativeAssignor, with the fixes KAFKA-9848,
// KAFKA-9841, KAFKA-10413, KAFKA-12495 and KAFKA-15693): deleted work and work running twice is
// revoked; the work of a departed worker is held unassigned for scheduled.rebalance.max.delay.ms
// in case it comes back (it keeps its work if it returns still running it; a worker that
// returns empty gets the lost work when the delay ends); load is balanced only when no delay
// runs, connectors and tasks separately, within one of each other, and consecutive revoking
// rounds back off exponentially. Two deliberate differences from Java: deleted work is computed
// from the previous assignment and from what members run (Java: the previous assignment only,
// which leaves a connector deleted across a leader change running one round longer), and work a
// member that is still in the group never received (it missed the SyncGroup of a hand-over whose
// LeaveGroup started the next rebalance) is reassigned at once, not held as lost. The
// leader reads the config topic to the end before it assigns, so its snapshot may be ahead of
// every member's offset; the assignment then carries the snapshot's offset, as Java's does
// after its refresh.
//
// A worker that cannot reach the coordinator for the session timeout stops its work on its own
// (KAFKA-9184). Java uses heartbeat.interval.ms for this; the session timeout is the point after
// which the coordinator has certainly dropped the worker, and the other workers cannot get its
// work before the scheduled delay has also run, so stopping then is early enough and survives
// short coordinator hiccups.
//
// # The wasmconnect extension
//
// Two Connect clusters that share a group.id but not their internal topics or converters merge
// silently or loop on CONFIG_MISMATCH (Kafka's workers compare no settings when they join). To
// say why instead, wasmconnect appends an extension to the standard fields: member metadata carries the worker's version and its
// cluster-relevant settings (config.SharedKeys: internal topic names and sizes, converters), and an
// assignment may carry a human-readable error. A wasmconnect leader refuses a member whose
// settings differ from its own for a key both report, with a message naming each setting, the
// worker's value and the group's, e.g.
//
//	value.converter is org.apache.kafka.connect.storage.StringConverter on this worker but
//	org.apache.kafka.connect.json.JsonConverter in group connect-cluster (leader http://a:8083)
//
// The refused worker gets no work, logs the message at ERROR, shows it in State, leaves the
// group and tries again after 10–30 s; the others keep their work. If most workers disagree
// with the leader, the leader is the misconfigured one: it refuses itself and leaves, and the
// others rejoin under a new leader. Workers without the extension (Java workers) are always
// accepted, and a Java leader ignores the extension, so mixed groups behave exactly as Kafka.
//
// Java ignores the extension because its decoders (Kafka's Schema.read) read the fields they
// declare and never check that the buffer was consumed. Java may also read a v0 payload with the
// v1 schema (IncrementalCooperativeConnectProtocol does so for assignments), so a v0
// payload with an extension is therefore padded with the v1 fields' empty values first (a null
// allocation in metadata; a null revoked list and a zero delay in an assignment), so a v1 reader
// stops before the extension. TestJavaIgnoresExtension checks this with a reader written to
// Java's rules.
//
// # Timing
//
// Defaults are Kafka's: session 10 s, heartbeat 3 s, rebalance 60 s. Heartbeats continue while
// the Handler works and while the member waits in JoinGroup or SyncGroup (brokers count those;
// kfake otherwise times out a member that waits for a slow rebalance). A graceful stop first hands
// the work over: one last rebalance as a leaving member with nothing running, so that the leader
// gives its work to the others at once (see handOver), then LeaveGroup. Kafka instead leaves at
// once, and the departed worker's work waits for scheduled.rebalance.max.delay.ms like any lost
// work; here only a worker that dies (or whose hand-over fails) is waited for, so that a restarting
// worker can take its work back.
package cluster
