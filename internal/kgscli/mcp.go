package kgscli

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/kgsearch/kgsearch/pkg/mcpserver"
)

func newMCPCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the MCP tools (search, crawl, crawl_status, get_document, find_entities, related_entities) on stdio",
		Long: `Runs the Model Context Protocol server on stdin/stdout for an agent (Claude Desktop,
an IDE, any MCP client). The tools call the services at --search-url, --crawler-url and
--kg-url with --api-key. Logs go to stderr; stdout carries only the protocol.`,
		Args: args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Requests keep --timeout; a crawl's event stream has none (apiclient drops it).
			srv := mcpserver.New(mcpserver.Deps{Search: o.search(), Crawler: o.crawler(), Graph: o.kg(), Version: version})
			return srv.Run(cmd.Context(), &mcp.IOTransport{Reader: readCloser{o.io.In}, Writer: writeCloser{o.io.Out}})
		},
	}
}

// version is set at build time with -ldflags "-X .../internal/kgscli.version=...".
var version = "dev"
