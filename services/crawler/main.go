// Command crawler is the kgsearch crawler service: it crawls websites into
// MariaDB (documents, chunks, embeddings) and hands them to the kg service.
// Configuration comes from the environment; see README.md.
package main

import (
	"github.com/kgsearch/kgsearch/internal/servicemain"
	"github.com/kgsearch/kgsearch/services/crawler/internal/app"
	"github.com/kgsearch/kgsearch/services/crawler/internal/config"
)

func main() { servicemain.Main("crawler", config.FromEnv, app.Run) }
