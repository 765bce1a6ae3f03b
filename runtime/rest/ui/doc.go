// Package ui is the worker's web console, served at /ui by the REST server: plain HTML, CSS and
// JavaScript embedded in the binary, with no build step, no framework and nothing fetched from
// elsewhere, so it works on a worker without outside network.
//
// The console is a client of the REST API like any other: it reads GET /workers, /connectors,
// /connectors/{name}/..., /state-changes, /reconciler and /metrics, and calls pause, resume,
// restart, stop and delete, with the credentials the user signs in with (HTTP basic or a bearer
// token, kept in the tab's sessionStorage). The files themselves hold no data and are served to
// anyone; GET /session tells the console whether the user may change anything, and the actions
// are offered only then. Secrets in connector configs (keys naming a password, secret, token,
// credentials or key material) are masked on the page.
//
// The package knows nothing of the worker: it is an http.Handler over the embedded files.
package ui
