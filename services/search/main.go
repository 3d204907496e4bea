// Command search is the kgsearch search service: the five-phase search over the
// MariaDB vectors, the kg service's graph and its own Bleve BM25 index, answering in
// TOON (JSON on request). With -reindex it rebuilds the Bleve index from MariaDB and
// exits. Configuration comes from the environment; see README.md.
package main

import (
	"flag"

	"github.com/kgsearch/kgsearch/internal/servicemain"
	"github.com/kgsearch/kgsearch/services/search/internal/app"
	"github.com/kgsearch/kgsearch/services/search/internal/config"
)

func main() {
	reindex := flag.Bool("reindex", false, "rebuild the Bleve index (SEARCH_INDEX_DIR) from MariaDB and exit")
	flag.Parse()
	run := app.Run
	if *reindex {
		run = app.Reindex
	}
	servicemain.DefaultGCPercent(300) // GOGC unset: see docs/adr/0008
	servicemain.Main("search", config.FromEnv, run)
}
