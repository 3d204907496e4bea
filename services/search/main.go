// Command search is the kgsearch search service: the five-phase search over the
// MariaDB vectors, the kg service's graph and its own Bleve BM25 index, answering in
// TOON (JSON on request). With -reindex it rebuilds the Bleve index from MariaDB and
// exits. Configuration comes from the environment; see README.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/kgsearch/kgsearch/internal/pprofenv"
	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/services/search/internal/app"
	"github.com/kgsearch/kgsearch/services/search/internal/config"
)

func main() {
	reindex := flag.Bool("reindex", false, "rebuild the Bleve index (SEARCH_INDEX_DIR) from MariaDB and exit")
	flag.Parse()
	cfg, err := config.FromEnv(envconf.New())
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "search: bad configuration:\n%v\n", err)
		os.Exit(2)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(logger)
	if err := pprofenv.Start(logger); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", "search", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	run := app.Run
	if *reindex {
		run = app.Reindex
	}
	if err := run(ctx, cfg, logger); err != nil {
		logger.Error("search stopped", "err", err)
		os.Exit(1)
	}
}
