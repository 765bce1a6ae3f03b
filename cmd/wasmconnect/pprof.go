package main

import (
	"log/slog"
	"net/http"
	"net/http/pprof"
	"os"
)

// startPprof serves Go's profiler on WASMCONNECT_PPROF_ADDR (say 127.0.0.1:6060) when it is set,
// so a slow pipeline can be profiled in place. It is off by default: the profiler exposes internals.
func startPprof(log *slog.Logger) {
	addr := os.Getenv("WASMCONNECT_PPROF_ADDR")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	go func() {
		log.Info("profiler listening", "addr", addr)
		if err := http.ListenAndServe(addr, mux); err != nil {
			log.Error("profiler stopped", "err", err)
		}
	}()
}
