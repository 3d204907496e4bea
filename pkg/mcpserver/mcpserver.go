// Package mcpserver is kgsearch's Model Context Protocol server, built on the
// official Go SDK (github.com/modelcontextprotocol/go-sdk). It exposes six tools
// to agents: search, crawl, crawl_status, get_document, find_entities and
// related_entities. The tools call the services through small client interfaces
// (pkg/apiclient for search and the crawler, pkg/kgapi for kg), so one server
// serves both transports: stdio (`kgs mcp`, StdioTransport) and streamable HTTP,
// mounted by the search service at /mcp behind its API keys (HTTPHandler). Over
// both a message that gives a key twice in one object is refused as an Invalid
// Request, as the REST API refuses such bodies, rather than read with the last
// value; over stdio the session then goes on with the next message.
//
// Tool results are text the model reads: TOON by default (the compact format the
// search API answers in), JSON with format=json. Bad arguments and service errors
// come back as tool errors (IsError) that say what to change.
package mcpserver

import (
	"context"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// Searcher runs searches (apiclient.SearchClient).
type Searcher interface {
	Search(ctx context.Context, req apiclient.SearchRequest) ([]byte, string, error)
}

// Crawler starts and follows crawl jobs and reads stored documents
// (apiclient.CrawlerClient).
type Crawler interface {
	Start(ctx context.Context, spec apiclient.CrawlSpec) (*apiclient.CrawlStatus, error)
	Crawl(ctx context.Context, id string) (*apiclient.CrawlStatus, error)
	Events(ctx context.Context, id string, fn func(apiclient.Event) error) (*apiclient.CrawlStatus, error)
	Chunk(ctx context.Context, id string) (*apiclient.Chunk, error)
	Document(ctx context.Context, id string, chunks bool) (*apiclient.Document, error)
}

// Graph answers entity questions (kgapi.Client).
type Graph interface {
	Entities(ctx context.Context, prefix, typ string, limit int) (*kgapi.EntityList, error)
	Expand(ctx context.Context, req kgapi.ExpandRequest) (*kgapi.ExpandResponse, error)
}

// Deps are the services the tools call. A nil part makes its tools answer a tool
// error naming the setting that is missing; the tool list stays the same.
type Deps struct {
	Search  Searcher
	Crawler Crawler
	Graph   Graph
	// Version is reported to clients as the server version.
	Version string
	Logger  *slog.Logger
}

const instructions = `kgsearch searches crawled web documentation with vector, BM25 and knowledge-graph signals.
Typical use: call search with a question; cite results by url and the chunk_id/start/end offsets; call get_document with a chunk_id to read the full chunk or with a document id to read the page.
To add documents, call crawl with a start URL (it waits and reports progress; large crawls: wait=false, then crawl_status).
find_entities completes entity names known to the graph; related_entities explores what an entity is related to (uses, depends on, alternatives, ...), useful to refine a search.
Results are TOON (a compact, indented, tabular JSON equivalent) unless format=json.`

// New returns the MCP server with its tools registered.
func New(d Deps) *mcp.Server {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	d.Logger = sdkLogger(d.Logger)
	if d.Version == "" {
		d.Version = "dev"
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "kgsearch", Title: "kgsearch", Version: d.Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: d.Logger})
	t := &tools{d: d}
	t.register(s)
	s.AddReceivingMiddleware(plainSchemaErrors)
	return s
}

// plainSchemaErrors rewrites the SDK's schema validation errors of tool arguments
// ("validating \"arguments\": validating root: validating /properties/k: minimum:
// 0/1 is less than 1.000000") into a sentence naming the tool and the argument.
func plainSchemaErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		ctr, ok := res.(*mcp.CallToolResult)
		if err != nil || !ok || !ctr.IsError || len(ctr.Content) != 1 {
			return res, err
		}
		tc, ok := ctr.Content[0].(*mcp.TextContent)
		if !ok {
			return res, err
		}
		msg, ok := strings.CutPrefix(tc.Text, `validating "arguments": `)
		if !ok {
			return res, err
		}
		msg = strings.TrimPrefix(msg, "validating root: ")
		if rest, ok := strings.CutPrefix(msg, "validating /properties/"); ok {
			if name, why, ok := strings.Cut(rest, ": "); ok {
				msg = fmt.Sprintf("argument %q: %s", name, plainBound(why))
			}
		}
		if strings.HasPrefix(msg, "unmarshaling arguments: ") {
			msg = "the arguments must be a JSON object of the tool's parameters"
		}
		name := ""
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
			name = p.Name
		}
		tc.Text = fmt.Sprintf("invalid arguments for %s: %s; fix them as the tool's input schema says and call again", name, msg)
		return res, err
	}
}

// boundRE matches the schema validator's bound errors, whose numbers are
// fractions and fixed-point floats ("minimum: 0/1 is less than 1.000000").
var boundRE = regexp.MustCompile(`^(minimum|maximum): (-?\d+)(?:/1)? is (?:less|greater) than (-?\d+(?:\.\d+)?)$`)

// plainBound says a bound error as a person would ("must be at least 1, got 0");
// any other reason is returned as it is.
func plainBound(why string) string {
	m := boundRE.FindStringSubmatch(why)
	if m == nil {
		return why
	}
	limit := m[3]
	if strings.Contains(limit, ".") {
		limit = strings.TrimSuffix(strings.TrimRight(limit, "0"), ".")
	}
	if m[1] == "minimum" {
		return fmt.Sprintf("must be at least %s, got %s", limit, m[2])
	}
	return fmt.Sprintf("must be at most %s, got %s", limit, m[2])
}

// HTTPHandler serves the server over streamable HTTP. When keys is not empty every
// request needs "Authorization: Bearer <key>" with one of them (the MCP tools
// include crawl, which writes, so reads are not exempt as on the REST API). A
// POSTed body that gives a key twice in one object is refused with 400 and a
// JSON-RPC Invalid Request error naming the key (refuseDuplicateKeys).
func HTTPHandler(d Deps, keys []string) http.Handler {
	return httpHandler(d, keys, SessionIdle, MaxSessions)
}

// SessionIdle is how long an MCP session over HTTP lives without a request
// (a tool call in progress counts as one): then the server forgets it, and
// the client's next request is a 404 that tells it to initialize a new one,
// as the MCP transport specifies. Without it every session a client opened
// and abandoned stayed in memory for the life of the process.
const SessionIdle = time.Hour

// MaxSessions bounds the MCP sessions open over HTTP at once. A session costs
// about 10 KB and a goroutine until it is closed or idle for SessionIdle, and
// the rate limit lets one key open tens of thousands an hour; past the bound a
// new session is refused with 503 and Retry-After (open ones go on).
const MaxSessions = 1000

func httpHandler(d Deps, keys []string, idle time.Duration, maxSessions int) http.Handler {
	srv := New(d)
	logger := d.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: sdkLogger(logger), MaxRequestBodyBytes: maxBody, SessionTimeout: idle})
	return RequireKey(keys, limitSessions(srv, maxSessions, refuseDuplicateKeys(h)))
}

// limitSessions refuses a request that would open a session (a POST without
// Mcp-Session-Id) while maxSessions are open, with 503, Retry-After and a
// JSON-RPC error saying so. Such requests still being served count as open:
// the SDK adds the session only when the request reaches it, after
// refuseDuplicateKeys has read the whole body, so requests that arrived
// together (or sent their bodies slowly) would all see room and together pass
// the bound.
func limitSessions(srv *mcp.Server, maxSessions int, next http.Handler) http.Handler {
	var mu sync.Mutex
	opening := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
			mu.Lock()
			n := opening
			for range srv.Sessions() {
				n++
			}
			if n >= maxSessions {
				mu.Unlock()
				w.Header().Set("Retry-After", "60")
				writeRPCError(w, http.StatusServiceUnavailable, "",
					fmt.Sprintf("this server has %d MCP sessions open or opening, its limit; retry later, and close sessions you no longer use (DELETE /mcp with their Mcp-Session-Id)", n))
				return
			}
			opening++
			mu.Unlock()
			defer func() {
				mu.Lock()
				opening--
				mu.Unlock()
			}()
		}
		next.ServeHTTP(w, r)
	})
}

// RequireKey wraps next so that, when keys is not empty, requests without a valid
// bearer key get a 401 problem document.
func RequireKey(keys []string, next http.Handler) http.Handler {
	if len(keys) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := httpserver.BearerToken(r)
		if ok {
			for _, k := range keys {
				if subtle.ConstantTimeCompare([]byte(tok), []byte(k)) == 1 {
					next.ServeHTTP(w, r)
					return
				}
			}
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="kgsearch"`)
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"type":"about:blank","title":"unauthorized","status":401,` +
			`"detail":"the MCP endpoint needs the header Authorization: Bearer <api key> (one of KGS_API_KEYS)"}`))
	})
}
