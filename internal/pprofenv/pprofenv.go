// Package pprofenv serves Go's runtime profiles (net/http/pprof) on a separate
// loopback listener when KGS_PPROF_ADDR is set, so a running service can be
// profiled under load (`go tool pprof http://127.0.0.1:PORT/debug/pprof/profile`).
// It is off by default, and refuses any address that is not loopback: profiles
// reveal the program's internals and cost CPU while they are taken.
package pprofenv

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// Start serves the profiles on KGS_PPROF_ADDR (host:port, loopback only) in the
// background. It returns an error naming the variable when the address is
// unusable, and nil without doing anything when the variable is unset.
func Start(logger *slog.Logger) error {
	addr := os.Getenv("KGS_PPROF_ADDR")
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("KGS_PPROF_ADDR: %q is not host:port: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("KGS_PPROF_ADDR: %q is not a loopback address; profiles are served on loopback only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("KGS_PPROF_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	logger.Info("serving profiles", "addr", ln.Addr().String())
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			logger.Error("profile server stopped", "err", err)
		}
	}()
	return nil
}
