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

// mcpDeps are the MCP tools' services as the search service sees them. The in-process
// search client presents one of the server's own keys: the MCP request was checked
// already, and searches need a key unless KGS_PUBLIC_SEARCH. In-process calls have
// no peer address, so they are not rate-limited twice (the /mcp request was).
func mcpDeps(srv *httpserver.Server, graph mcpserver.Graph, crawler mcpserver.Crawler, logger *slog.Logger) mcpserver.Deps {
	key := ""
	if keys := srv.Config().APIKeys; len(keys) > 0 {
		key = keys[0]
	}
	return mcpserver.Deps{
		Search:  apiclient.NewSearch("http://search.in-process", apiclient.InProcess(srv.Engine()), key),
		Crawler: crawler,
		Graph:   graph,
		Logger:  logger,
	}
}
