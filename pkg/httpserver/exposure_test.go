package httpserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestIsLoopback(t *testing.T) {
	tests := map[string]bool{
		"127.0.0.1:8080":        true,
		"127.8.9.10:1":          true,
		"[::1]:8080":            true,
		"localhost:8080":        true,
		"LOCALHOST:1":           true,
		"[::ffff:127.0.0.1]:80": true,
		":8080":                 false, // empty host: every interface
		"0.0.0.0:8080":          false,
		"[::]:8080":             false,
		"10.1.2.3:8080":         false,
		"192.168.1.5:8080":      false,
		"example.com:8080":      false,
		"localhost.example:80":  false,
		"no-port":               false,
	}
	for addr, want := range tests {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestCheckExposure(t *testing.T) {
	key := []string{"0123456789abcdef-key"}
	tests := []struct {
		addr    string
		keys    []string
		allow   bool
		refused bool
	}{
		{"127.0.0.1:8080", nil, false, false},
		{"localhost:8080", nil, false, false},
		{"0.0.0.0:8080", nil, false, true},
		{":8080", nil, false, true},
		{"[::]:8080", nil, false, true},
		{"0.0.0.0:8080", key, false, false},
		{"0.0.0.0:8080", nil, true, false},
	}
	for _, tt := range tests {
		err := CheckExposure(tt.addr, tt.keys, tt.allow)
		if tt.refused != (err != nil) {
			t.Errorf("CheckExposure(%q, %d keys, allow=%v) = %v, want refused=%v", tt.addr, len(tt.keys), tt.allow, err, tt.refused)
		}
		if err != nil && (!errors.Is(err, ErrNoAPIKeys) || !strings.Contains(err.Error(), "KGS_API_KEYS") || !strings.Contains(err.Error(), "KGS_ALLOW_NO_AUTH")) {
			t.Errorf("refusal %q does not name KGS_API_KEYS and KGS_ALLOW_NO_AUTH", err)
		}
	}
}

// A server configured on 0.0.0.0 without keys refuses in Run, before it listens:
// the test never binds or dials a non-loopback address.
func TestRunRefusesOpenNonLoopback(t *testing.T) {
	var logs strings.Builder
	s := New("test", Config{Addr: "0.0.0.0:0"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err := s.Config().Validate(); !errors.Is(err, ErrNoAPIKeys) {
		t.Fatalf("Validate: got %v, want ErrNoAPIKeys", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Run(ctx)
	if !errors.Is(err, ErrNoAPIKeys) || !strings.Contains(err.Error(), "KGS_API_KEYS") {
		t.Fatalf("Run: got %v, want the refusal naming KGS_API_KEYS", err)
	}
	if strings.Contains(logs.String(), "listening") {
		t.Errorf("server listened before refusing: %s", logs.String())
	}
}

// With the opt-out the check passes and warns loudly, naming KGS_ALLOW_NO_AUTH; on
// loopback it passes silently. Nothing listens.
func TestOptOutWarns(t *testing.T) {
	for _, tt := range []struct {
		addr string
		warn bool
	}{{"0.0.0.0:8080", true}, {"127.0.0.1:8080", false}} {
		var logs strings.Builder
		s := New("test", Config{Addr: tt.addr, AllowNoAuth: true}, slog.New(slog.NewTextHandler(&logs, nil)))
		if err := s.checkExposure(); err != nil {
			t.Fatalf("%s with KGS_ALLOW_NO_AUTH: %v", tt.addr, err)
		}
		warned := strings.Contains(logs.String(), "WITHOUT API KEYS") && strings.Contains(logs.String(), "KGS_ALLOW_NO_AUTH")
		if warned != tt.warn {
			t.Errorf("%s: warned=%v, want %v (log %q)", tt.addr, warned, tt.warn, logs.String())
		}
	}
}

func TestCheckVarsNamesTheVariables(t *testing.T) {
	if errs := (Config{Addr: "127.0.0.1:8080", APIKeys: []string{"0123456789abcdef"}}).CheckVars("X_ADDR"); len(errs) != 0 {
		t.Errorf("good settings: %v", errs)
	}
	for _, tt := range []struct {
		cfg  Config
		want []string // error prefixes, in order
	}{
		{Config{Addr: "8080", AllowNoAuth: true}, []string{"X_ADDR: \"8080\" is not host:port"}},
		{Config{Addr: "h:99999", AllowNoAuth: true}, []string{"X_ADDR: port \"99999\""}},
		{Config{Addr: "127.0.0.1:1", APIKeys: []string{"0123456789abcdef", "short"}}, []string{"KGS_API_KEYS: key 2 is shorter than 16"}},
		{Config{Addr: "0.0.0.0:1"}, []string{"KGS_API_KEYS: refusing to start"}},
	} {
		errs := tt.cfg.CheckVars("X_ADDR")
		if len(errs) != len(tt.want) {
			t.Errorf("%+v: got %v, want %d errors", tt.cfg, errs, len(tt.want))
			continue
		}
		for i, e := range errs {
			if !strings.HasPrefix(e.Error(), tt.want[i]) {
				t.Errorf("%+v: error %d is %q, want it to start %q", tt.cfg, i, e, tt.want[i])
			}
		}
	}
	if errs := (Config{Addr: "0.0.0.0:1"}).CheckVars("X_ADDR"); len(errs) != 1 || !errors.Is(errs[0], ErrNoAPIKeys) || !strings.Contains(errs[0].Error(), `X_ADDR="0.0.0.0:1"`) {
		t.Errorf("exposure: got %v, want ErrNoAPIKeys naming X_ADDR", errs)
	}
}
