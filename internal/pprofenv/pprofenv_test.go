package pprofenv

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "10.1.2.3:6060", "example.org:6060", "nonsense"} {
		t.Setenv("KGS_PPROF_ADDR", addr)
		if err := Start(slog.New(slog.NewTextHandler(io.Discard, nil))); err == nil || !strings.Contains(err.Error(), "KGS_PPROF_ADDR") {
			t.Errorf("Start with %q: got %v, want an error naming KGS_PPROF_ADDR", addr, err)
		}
	}
}

func TestServesOnLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("KGS_PPROF_ADDR", addr)
	if err := Start(slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatalf("Start: %v", err)
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/cmdline")
	if err != nil {
		t.Fatalf("get cmdline: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("cmdline: status %d", resp.StatusCode)
	}
}

func TestUnsetDoesNothing(t *testing.T) {
	t.Setenv("KGS_PPROF_ADDR", "")
	if err := Start(slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Errorf("Start unset: %v", err)
	}
}
