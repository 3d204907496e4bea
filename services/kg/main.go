// Command kg is the kgsearch knowledge-graph service: it extracts entities and
// relations from the documents the crawler sends, stores them in Neo4j and
// serves entity matching, expansion and query parsing to the search service.
// Configuration comes from the environment; see README.md.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/kgsearch/kgsearch/internal/pprofenv"
	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/services/kg/internal/app"
	"github.com/kgsearch/kgsearch/services/kg/internal/config"
)

func main() {
	cfg, err := config.FromEnv(envconf.New())
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kg: bad configuration:\n%v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(logger)
	if err := pprofenv.Start(logger); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", "kg", err)
		os.Exit(2)
	}
	logger.Info("starting kg", cfg.LogAttrs()...)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, cfg, logger); err != nil {
		logger.Error("kg stopped", "err", err)
		os.Exit(1)
	}
}
