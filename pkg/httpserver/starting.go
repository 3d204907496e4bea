package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Startup answers /healthz and /readyz on the service's address while the service is
// still starting (loading its model, waiting for its database), so that an operator or
// an orchestrator sees a 503 with the reason instead of a refused connection. Every
// other path answers 503 too. Call Stop before the real server listens.
type Startup struct {
	srv    *http.Server
	done   chan struct{}
	reason atomic.Pointer[startupReason]
	stop   sync.Once
}

// startupReason is what the service waits for (public) and, after a failed
// attempt, with the attempt's error (full).
type startupReason struct{ public, full string }

// Starting listens on addr and serves the start-up answers until Stop. When keys
// (the service's API keys) are set, the error of the last attempt to reach a
// dependency is told only to requests with one of them, as on the server's /readyz
// (withoutDetails): it names internal addresses and users.
func Starting(addr, name string, keys []string, logger *slog.Logger) (*Startup, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := &Startup{done: make(chan struct{})}
	s.Set("starting")
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "service": name})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "2")
		reason := s.reason.Load()
		text := reason.full
		if _, ok := keyIndex(keys, r); len(keys) > 0 && !ok {
			text = reason.public
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{
			"status": "not ready", "service": name, "checks": map[string]string{"startup": text},
		})
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("start-up server stopped", "err", err)
		}
	}()
	return s, nil
}

// Set records what the service is waiting for; /readyz reports it.
func (s *Startup) Set(reason string) { s.reason.Store(&startupReason{public: reason, full: reason}) }

// WaitingFor returns a callback that reports each failed attempt to reach the named
// dependency (for store.OpenRetry and the like).
func (s *Startup) WaitingFor(what string) func(error) {
	return func(err error) {
		s.reason.Store(&startupReason{public: "waiting for " + what, full: "waiting for " + what + ": " + err.Error()})
	}
}

// Stop closes the listener and waits for in-flight answers. It is safe to call more
// than once, so a service can defer it and also call it before its real server starts.
func (s *Startup) Stop() {
	s.stop.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(ctx)
		<-s.done
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
