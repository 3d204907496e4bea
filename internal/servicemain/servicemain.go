// Package servicemain is the one main of the three services (crawler, kg,
// search): the configuration read from the environment and validated (a bad one
// exits 2 naming every variable at fault), the JSON logger at the configured
// level, the optional profiles (KGS_PPROF_ADDR, internal/pprofenv), a start-up
// log line, and the service run until SIGINT or SIGTERM (a failure exits 1).
package servicemain

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/kgsearch/kgsearch/internal/pprofenv"
	"github.com/kgsearch/kgsearch/pkg/envconf"
)

// Config is a service's configuration as Main uses it. A configuration that
// also has LogAttrs() []any (settings without secrets) has them logged at start.
type Config interface {
	Validate() error
	Level() slog.Level
}

// Main runs the service name: its configuration comes from fromEnv, and run
// serves until the context ends. It does not return.
func Main[C Config](name string, fromEnv func(*envconf.Reader) (C, error), run func(context.Context, C, *slog.Logger) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Run(ctx, name, envconf.New(), os.Stderr, fromEnv, run)
	stop()
	os.Exit(code)
}

// Run is Main without the process around it: it returns the exit status (0 when
// run returned nil, 1 when it failed, 2 for a bad configuration) and logs to
// stderr.
func Run[C Config](ctx context.Context, name string, env *envconf.Reader, stderr io.Writer,
	fromEnv func(*envconf.Reader) (C, error), run func(context.Context, C, *slog.Logger) error) int {
	cfg, err := fromEnv(env)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: bad configuration:\n%v\n", name, err)
		return 2
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.Level()}))
	slog.SetDefault(logger)
	if err := pprofenv.Start(logger); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	attrs := []any{"service", name}
	if a, ok := any(cfg).(interface{ LogAttrs() []any }); ok {
		attrs = append(attrs, a.LogAttrs()...)
	}
	logger.Info("starting", attrs...)
	if err := run(ctx, cfg, logger); err != nil {
		logger.Error("service stopped", "service", name, "err", err)
		return 1
	}
	return 0
}

// DefaultGCPercent sets the garbage collector's target (the GOGC percentage) to
// percent unless the GOGC variable is set, which keeps precedence, and returns the
// percentage in effect. kg and search use 300 (docs/adr/0008): their live heap is
// mostly long-lived (kg's graph projection and entity profiles, a few hundred MB;
// search's caches), so at Go's default of 100 the collector re-marks it after every
// live-heap's worth of per-query garbage, a third of kg's CPU under load.
func DefaultGCPercent(percent int) int {
	if v := os.Getenv("GOGC"); v != "" {
		old := debug.SetGCPercent(100) // read the percentage the runtime took from GOGC
		debug.SetGCPercent(old)
		return old
	}
	debug.SetGCPercent(percent)
	return percent
}
