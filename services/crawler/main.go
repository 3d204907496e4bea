// Command crawler is the kgsearch crawler service: it crawls websites into
// MariaDB (documents, chunks, embeddings) and hands them to the kg service.
// Configuration comes from the environment; see README.md.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/services/crawler/internal/app"
	"github.com/kgsearch/kgsearch/services/crawler/internal/config"
)

func main() {
	cfg, err := config.FromEnv(envconf.New())
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "crawler: bad configuration:\n%v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(logger)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, cfg, logger); err != nil {
		logger.Error("crawler stopped", "err", err)
		os.Exit(1)
	}
}
