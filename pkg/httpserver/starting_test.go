package httpserver

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestStartingReportsTheReason(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s, err := Starting(addr, "test", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	s.WaitingFor("MariaDB")(errors.New("dial tcp 127.0.0.1:13306: connection refused"))
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Errorf("healthz: got %d, want 200", code)
	}
	code, body := get("/readyz")
	if code != 503 || !strings.Contains(body, "waiting for MariaDB: dial tcp 127.0.0.1:13306: connection refused") {
		t.Errorf("readyz: got %d %s, want 503 naming the reason", code, body)
	}
	s.Stop()
	s.Stop() // a deferred second Stop is harmless
	// The address is free again for the real server.
	ln2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("address not released after Stop: %v", err)
	}
	ln2.Close()
}
