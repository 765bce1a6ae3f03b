module github.com/wasmconnect/wasmconnect/sdk/go

// The Go SDK for plugins, a module of its own so that a plugin depends on nothing of the worker
// (wazero, franz-go, hcl). The worker uses its wire, configdef and connect packages through the
// replace directive of the repository's go.mod.

go 1.26
