package app

import (
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/mcpserver"
)

// MountMCP serves the MCP tools (pkg/mcpserver) over streamable HTTP at /mcp,
// behind the service's API keys (every method needs one when keys are set). The
// search tool calls this server's own REST API in process; graph tools call kg,
// and crawl tools the crawler (nil: those tools answer that it is not configured).
func MountMCP(srv *httpserver.Server, graph mcpserver.Graph, crawler mcpserver.Crawler, keys []string, logger *slog.Logger) {
	h := gin.WrapH(mcpserver.HTTPHandler(mcpDeps(srv, graph, crawler, logger), keys))
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		srv.Engine().Handle(m, "/mcp", h)
	}
}

// mcpDeps are the MCP tools' services as the search service sees them.
func mcpDeps(srv *httpserver.Server, graph mcpserver.Graph, crawler mcpserver.Crawler, logger *slog.Logger) mcpserver.Deps {
	return mcpserver.Deps{
		Search:  apiclient.NewSearch("http://search.in-process", apiclient.InProcess(srv.Engine()), ""),
		Crawler: crawler,
		Graph:   graph,
		Logger:  logger,
	}
}
