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
	s, err := Starting(addr, "test", nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
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

// TestStartingDetailsNeedAKey: with API keys, the start-up /readyz says what the
// service waits for to everyone, and the last attempt's error (internal
// addresses, user names) only with a key.
func TestStartingDetailsNeedAKey(t *testing.T) {
	const key = "0123456789abcdef-start"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s, err := Starting(addr, "test", []string{key}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	s.WaitingFor("MariaDB (KGS_MARIADB_DSN)")(errors.New("Error 1045 (28000): Access denied for user 'kgsearch'@'172.18.0.4'"))
	get := func(auth string) string {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/readyz", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("readyz: got %d, want 503", resp.StatusCode)
		}
		return string(b)
	}
	for _, auth := range []string{"", "Bearer wrong-wrong-wrong-wrong"} {
		if body := get(auth); !strings.Contains(body, `"startup":"waiting for MariaDB (KGS_MARIADB_DSN)"`) || strings.Contains(body, "172.18") {
			t.Errorf("without the key (%q): got %s, want what it waits for without the error", auth, body)
		}
	}
	if body := get("Bearer " + key); !strings.Contains(body, "Access denied for user 'kgsearch'@'172.18.0.4'") {
		t.Errorf("with the key: got %s, want the error", body)
	}
}
