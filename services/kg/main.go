// Command kg is the kgsearch knowledge-graph service: it extracts entities and
// relations from the documents the crawler sends, stores them in Neo4j and
// serves entity matching, expansion and query parsing to the search service.
// Configuration comes from the environment; see README.md.
package main

import (
	"github.com/kgsearch/kgsearch/internal/servicemain"
	"github.com/kgsearch/kgsearch/services/kg/internal/app"
	"github.com/kgsearch/kgsearch/services/kg/internal/config"
)

func main() {
	servicemain.DefaultGCPercent(300) // GOGC unset: see docs/adr/0008
	servicemain.Main("kg", config.FromEnv, app.Run)
}
