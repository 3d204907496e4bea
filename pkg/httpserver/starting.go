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
	reason atomic.Value // string
	stop   sync.Once
}

// Starting listens on addr and serves the start-up answers until Stop.
func Starting(addr, name string, logger *slog.Logger) (*Startup, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := &Startup{done: make(chan struct{})}
	s.reason.Store("starting")
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "service": name})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "2")
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{
			"status": "not ready", "service": name, "checks": map[string]string{"startup": s.reason.Load().(string)},
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
func (s *Startup) Set(reason string) { s.reason.Store(reason) }

// WaitingFor returns a callback that reports each failed attempt to reach the named
// dependency (for store.OpenRetry and the like).
func (s *Startup) WaitingFor(what string) func(error) {
	return func(err error) { s.Set("waiting for " + what + ": " + err.Error()) }
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
