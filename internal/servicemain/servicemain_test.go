package servicemain

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/envconf"
)

type testConfig struct {
	port  int
	level slog.Level
}

func (c testConfig) Validate() error {
	if c.port < 1 {
		return errors.New("T_PORT: must be at least 1")
	}
	return nil
}

func (c testConfig) Level() slog.Level { return c.level }

func (c testConfig) LogAttrs() []any { return []any{"port", c.port} }

func fromEnv(r *envconf.Reader) (testConfig, error) {
	c := testConfig{port: r.Int("T_PORT", 8000), level: r.LogLevel("T_LOG_LEVEL", slog.LevelInfo)}
	return c, r.Err()
}

func TestRunExitStatusAndLogs(t *testing.T) {
	t.Setenv("KGS_PPROF_ADDR", "")
	defer slog.SetDefault(slog.Default())
	for _, tt := range []struct {
		name   string
		env    map[string]string
		runErr error
		code   int
		out    []string
	}{
		{"runs", nil, nil, 0, []string{`"msg":"starting","service":"svc","port":8000`}},
		{"fails", nil, errors.New("boom"), 1, []string{`"msg":"service stopped","service":"svc","err":"boom"`}},
		{"malformed", map[string]string{"T_PORT": "x"}, nil, 2, []string{"svc: bad configuration:", "T_PORT"}},
		{"invalid", map[string]string{"T_PORT": "0"}, nil, 2, []string{"svc: bad configuration:\nT_PORT: must be at least 1"}},
		{"quiet", map[string]string{"T_LOG_LEVEL": "error"}, nil, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			ran := false
			code := Run(context.Background(), "svc", envconf.FromMap(tt.env), &out, fromEnv,
				func(_ context.Context, c testConfig, _ *slog.Logger) error { ran = true; return tt.runErr })
			if code != tt.code || ran != (tt.code != 2) {
				t.Errorf("exit %d, ran %v; want %d, ran %v", code, ran, tt.code, tt.code != 2)
			}
			for _, s := range tt.out {
				if !strings.Contains(out.String(), s) {
					t.Errorf("output lacks %q:\n%s", s, out.String())
				}
			}
			if tt.out == nil && out.Len() != 0 {
				t.Errorf("at level error, output %q, want none", out.String())
			}
		})
	}
	t.Setenv("KGS_PPROF_ADDR", "10.0.0.1:6060")
	var out bytes.Buffer
	if code := Run(context.Background(), "svc", envconf.FromMap(nil), &out, fromEnv,
		func(context.Context, testConfig, *slog.Logger) error { return nil }); code != 2 || !strings.Contains(out.String(), "KGS_PPROF_ADDR") {
		t.Errorf("a non-loopback KGS_PPROF_ADDR: exit %d, output %q; want 2 naming it", code, out.String())
	}
}

func TestDefaultGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	if got := DefaultGCPercent(300); got != 300 || debug.SetGCPercent(300) != 300 {
		t.Errorf("GOGC unset: got %d, want 300 in effect", got)
	}
	t.Setenv("GOGC", "150")
	debug.SetGCPercent(150) // what the runtime read from GOGC at start
	if got := DefaultGCPercent(300); got != 150 || debug.SetGCPercent(150) != 150 {
		t.Errorf("GOGC=150: got %d, want 150 kept", got)
	}
}
