// Package rest serves Kafka Connect's REST API (Kafka's ConnectRestServer and its resources, KIP-495, KIP-558, KIP-875, KIP-1017) over a Herder, so that kcctl, kafka-ui,
// AKHQ, Strimzi and the Terraform provider work against a wasmconnect worker unchanged.
//
//	srv := rest.New(herder, rest.WithLogger(log))
//	if err := srv.Start(":8083"); err != nil { ... }
//	...
//	err := srv.Shutdown(ctx) // graceful: waits for in-flight requests until ctx ends
//
// Server is an http.Handler (on julienschmidt/httprouter), so it can also be mounted elsewhere or
// driven by httptest.
//
// # Endpoints
//
//	GET    /                                   200 ServerInfo
//	GET    /health                             200 healthy, 503 starting, 500 unhealthy (10 s deadline);
//	                                           "checks" only for clients that may read the API
//	GET    /metrics                            Prometheus text (runtime/metrics sets, go_*, process_*)
//	GET    /connectors[?expand=status&expand=info]
//	POST   /connectors                         201 + Location: /connectors/{name}
//	GET    /connectors/{name}                  ConnectorInfo
//	DELETE /connectors/{name}                  204
//	GET    /connectors/{name}/config           the raw config
//	PUT    /connectors/{name}/config           201 + Location if created, 200 if updated
//	GET    /connectors/{name}/status           ConnectorStateInfo, tasks sorted by id
//	POST   /connectors/{name}/restart          204 (both flags false) or 202 + status
//	                                           ?includeTasks=&onlyFailed=
//	PUT    /connectors/{name}/pause            202
//	PUT    /connectors/{name}/resume           202
//	PUT    /connectors/{name}/stop             204
//	GET    /connectors/{name}/tasks            [TaskInfo]
//	GET    /connectors/{name}/tasks-config     {"x-0":{...}} (deprecated in Kafka, kept for old clients)
//	GET    /connectors/{name}/tasks/{t}/status TaskState
//	POST   /connectors/{name}/tasks/{t}/restart 204
//	PATCH  /connectors/{name}/config           200, merge patch: null removes a key (KIP-477)
//	GET    /connectors/{name}/topics           {"name":{"topics":[...]}} (KIP-558; 403 when disabled)
//	PUT    /connectors/{name}/topics/reset     202
//	GET    /connectors/{name}/offsets          {"offsets":[{"partition":{},"offset":{}}]} (KIP-875)
//	PATCH  /connectors/{name}/offsets          200 {"message":...}; 400 empty list or not STOPPED
//	DELETE /connectors/{name}/offsets          200 {"message":...}; 400 not STOPPED
//	GET    /connector-plugins[?connectorsOnly=true|false]
//	GET    /connector-plugins/{plugin}/config  [ConfigKeyInfo]
//	PUT    /connector-plugins/{plugin}/config/validate  200 ConfigInfos (also with errors)
//	GET    /admin/loggers                      {"root":{"level":"INFO","last_modified":null},...}
//	GET    /admin/loggers/{name}               {"level":...,"last_modified":...}; 404 unknown
//	PUT    /admin/loggers/{name}?scope=worker|cluster  200 [changed loggers] / 204; 400 no level,
//	                                           404 invalid level (as Kafka)
//	GET    /openapi.json                       the OpenAPI 3 document of all of the above
//
// wasmconnect's own routes, read-only: GET /workers (group membership), GET /reconciler (the HCL
// reconciler), GET /state-changes[?connector=] (recent state changes, newest first; WithStateHistory)
// and GET /session (the caller's user, role and whether it may change anything). GET /ui and
// /ui/<file> serve the web console (package ui) to anyone: the files hold no data, and the page
// reads everything through the routes above with the user's credentials.
//
// openapi.json (embedded) describes every route; a test checks it against the router both ways.
// GET routes also answer HEAD. A trailing slash is ignored. Unknown paths answer 404 "HTTP 404 Not
// Found" and a wrong method 405 "HTTP 405 Method Not Allowed" with an Allow header, Jersey's texts.
//
// # Errors
//
// Every error is {"error_code":N,"message":"..."} with N the HTTP status. A *connect.Error from the
// herder keeps its code and message; any other error is a 500 with its text. A herder call that has
// not returned when the request timeout ends (90 s by default) is answered 500 "Request timed out",
// like Kafka; a herder that honours ctx may return its own *connect.Error instead (e.g. Kafka 3.7's
// "Request timed out. The worker is currently ..."), which is passed on. Handlers run in their own
// goroutine with ctx derived from the request, so a herder that ignores ctx cannot hold a reply past
// the deadline, and a panic becomes a 500.
//
// # Input
//
// Bodies are limited to 8 MiB by default (413 beyond). Bodies must be one JSON object: empty bodies,
// malformed JSON (the message names the problem with line and column, e.g. "Invalid JSON in request
// body: unexpected end of JSON input (line 1, column 13)"), other JSON types and trailing data are
// 400s. Unknown top-level members are ignored, as in Kafka. Config values are JSON strings, or numbers
// and booleans kept as written ("tasks.max": 1 is "1", true is "true"), as Kafka's Jackson coerces
// them; null (except in a PATCH, where it removes the key), objects and arrays are 400s that name the
// key, e.g. `config value for "tasks.max" must be a string, got array`. Boolean query parameters take true or false in any case; anything else
// is a 400 (Kafka reads it as false).
//
// POST /connectors trims the name. A config "name" must equal the connector's name (Kafka's "Connector
// name configuration (b) doesn't match connector name in the URL (a)"); a missing one is added, on
// PUT as well. Names follow Kafka's rule, non-empty without ISO control characters, answered with
// Kafka's validation text; a name containing '/' is refused, since no URL path could address it
// (the router matches on the decoded path, so %2F is a path separator). Task ids that are not
// non-negative integers are 404s, as JAX-RS answers them.
//
// # Security
//
// All optional, and off by default as in Kafka (Option, or NewSetup from the worker's config.REST):
//
//   - TLS: WithTLS(certFile, keyFile) with PEM files, reloaded when they change; or WithTLSConfig.
//     NewSetup loads, for an https first listener, listeners.https.ssl.certificate.location and
//     listeners.https.ssl.key.location (or Kafka's listeners.https.ssl.keystore.type=PEM with
//     .keystore.location), listeners.https.ssl.ca.location (or .truststore.type=PEM with
//     .truststore.location) and listeners.https.ssl.client.authentication=none|requested|required.
//   - Authentication: WithAuth(Authenticator), from rest.auth.basic.file (HTTP basic; users with
//     PBKDF2-SHA256 hashes, see HashPassword) and rest.auth.tokens.file (bearer tokens by SHA-256,
//     see HashToken), with roles read and admin. Every POST, PUT, PATCH and DELETE needs admin: 401
//     with WWW-Authenticate without or with wrong credentials, 403 for a read-only user. GETs need
//     read, or nothing with WithAnonymousRead (rest.auth.anonymous.read=true); PUT
//     .../config/validate changes nothing and needs read; GET /health is always open, but shows its
//     checks (member ids, raw errors) only to an authenticated reader, never without credentials.
//   - Worker-to-worker requests: WithInternalKey(key) verifies the HMAC-SHA256 signature (Kafka's
//     X-Connect-Authorization headers, over method, path, timestamp and body) of every request with a
//     "forward" parameter or a signature header; Forwarder and SignRequest are the client side.
//
// Refusals use the usual {"error_code","message"} body.
//
// # Herder contract
//
// Each Herder method gets ctx from the request, with the request timeout and the *http.Request
// available through RequestFromContext. Nil slices and maps in results are answered as [] and {}.
// The Principal who sent the request is in ctx (PrincipalFromContext). A herder that finds another
// worker must serve the request (the leader, or the worker a task is assigned to) returns a
// *connect.RequestTargetError naming it; the server forwards the request there (WithForwarder, with
// Kafka's "forward" hops and the Authorization header) and writes back what that worker answered.
// The herder knows nothing of HTTP. GET /connectors/{name}/tasks/{t}/status is served from ConnectorStatus, with Kafka's 404 "No status
// found for task x-0". The access log is written at debug level through slog.
package rest
