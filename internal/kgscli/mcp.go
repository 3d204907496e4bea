package kgscli

import (
	"github.com/spf13/cobra"

	"github.com/kgsearch/kgsearch/pkg/mcpserver"
)

func newMCPCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the MCP tools (search, crawl, crawl_status, get_document, find_entities, related_entities) on stdio",
		Long: `Runs the Model Context Protocol server on stdin/stdout for an agent (Claude Desktop,
an IDE, any MCP client). The tools call the services at --search-url, --crawler-url and
--kg-url with --api-key. Logs go to stderr; stdout carries only the protocol. A message
that gives a key twice in one object is answered with a JSON-RPC Invalid Request error
(code -32600) naming the key, as the search service's /mcp does, and the session goes on;
a message over 16 MiB is answered with the same kind of error and ends the session.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Requests keep --timeout; a crawl's event stream has none (apiclient drops it).
			srv := mcpserver.New(mcpserver.Deps{Search: o.search(), Crawler: o.crawler(), Graph: o.kg(), Version: version})
			// A message that gives a key twice is answered with an Invalid Request
			// error, as over HTTP, and the session goes on.
			return srv.Run(cmd.Context(), mcpserver.StdioTransport(o.io.In, o.io.Out))
		},
	}
}

// version is set at build time with -ldflags "-X .../internal/kgscli.version=...".
var version = "dev"
