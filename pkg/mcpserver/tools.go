package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/toon"
)

type tools struct{ d Deps }

func readOnly() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
}

func (t *tools) register(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "search",
		Title:       "Search the crawled documents",
		Description: "Hybrid search (vector + BM25 + knowledge graph) over everything crawled. Returns ranked results with url, title, preview, score breakdown, chunk_id and start/end byte offsets for citations, plus the query's entities, suggested queries and related entities. Default output is TOON: results is a table whose header names the columns once.",
		InputSchema: schemaFor[SearchInput](map[string]limit{
			"q": {minLength: n(1), maxLength: n(2048)}, "k": {min: f(1), max: f(100)}, "offset": {min: f(0), max: f(1000)},
			"fusion": {enum: []any{"weighted", "rrf"}}, "mmr": {min: f(0), max: f(1)}, "format": {enum: formats},
		}),
		Annotations: readOnly(),
	}, t.search)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "crawl",
		Title:       "Crawl a website into the index",
		Description: "Starts a crawl job at url (same host by default) and, unless wait=false, waits for it, sending MCP progress notifications (pages done; total is max_pages plus failures and skips), then returns the job summary: counters of stored, unchanged, failed, skipped and deleted pages, chunks, rates, errors and warnings. Stored pages become searchable within seconds. With prune=true a crawl that saw its whole scope also deletes the stored pages in it that no page links to any more.",
		InputSchema: schemaFor[CrawlInput](map[string]limit{
			"url": {minLength: n(1), maxLength: n(2048)}, "max_pages": {min: f(1), max: f(100000)}, "max_depth": {min: f(0), max: f(100)},
			"wait_seconds": {min: f(1), max: f(3600)}, "format": {enum: formats},
		}),
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true), IdempotentHint: false, DestructiveHint: new(false)},
	}, t.crawl)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "crawl_status",
		Title:       "Status of a crawl job",
		Description: "The state (queued, running, stalled: running but no crawler works on it now, it resumes when one does; done, failed, cancelled) and counters of a crawl job started by crawl.",
		InputSchema: schemaFor[CrawlStatusInput](map[string]limit{"id": {minLength: n(1), maxLength: n(200)}, "format": {enum: formats}}),
		Annotations: readOnly(),
	}, t.crawlStatus)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "get_document",
		Title:       "Read a chunk or a document",
		Description: "With a chunk id (search results' chunk_id): the chunk's full text, its start/end byte offsets in the document text, heading path, and the document's id, url and title. With a document id: the document's metadata and its chunks in order with their offsets.",
		InputSchema: schemaFor[GetDocumentInput](map[string]limit{
			"id": {minLength: n(1), maxLength: n(64)}, "max_chunks": {min: f(1), max: f(500)}, "format": {enum: formats},
		}),
		Annotations: readOnly(),
	}, t.getDocument)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "find_entities",
		Title:       "Find entities by name",
		Description: "Entities of the knowledge graph (technologies, libraries, concepts, ...) whose name starts with prefix, most mentioned first, with type, aliases and mention/document counts. Use the names in search queries or related_entities.",
		InputSchema: schemaFor[FindEntitiesInput](map[string]limit{
			"prefix": {minLength: n(1), maxLength: n(100)}, "limit": {min: f(1), max: f(100)}, "format": {enum: formats},
		}),
		Annotations: readOnly(),
	}, t.findEntities)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "related_entities",
		Title:       "Entities related to given ones",
		Description: "Explores the knowledge graph from the given entities: related entities with the path (relations such as USES, DEPENDS_ON, ALTERNATIVE_TO, CO_OCCURS), its confidence and the chunk ids that support it (read them with get_document).",
		InputSchema: schemaFor[RelatedEntitiesInput](map[string]limit{
			"entities": {minItems: n(1), maxItems: n(20)}, "max_hops": {min: f(1), max: f(2)}, "limit": {min: f(1), max: f(100)},
			"min_confidence": {min: f(0), max: f(1)}, "format": {enum: formats},
		}),
		Annotations: readOnly(),
	}, t.relatedEntities)
}

// text is a tool result holding s.
func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// render writes v in the requested format (TOON unless "json").
func render(v any, format string) (*mcp.CallToolResult, any, error) {
	var b []byte
	var err error
	if format == "json" {
		b, err = json.Marshal(v)
	} else {
		b, err = toon.Marshal(v)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("encode the answer as %s: %w", format, err)
	}
	return text(string(b)), nil, nil
}

func (t *tools) search(ctx context.Context, _ *mcp.CallToolRequest, in SearchInput) (*mcp.CallToolResult, any, error) {
	if t.d.Search == nil {
		return nil, nil, errors.New("search is not configured on this MCP server: set KGS_SEARCH_URL (or --search-url)")
	}
	if strings.TrimSpace(in.Q) == "" {
		return nil, nil, errors.New(`invalid argument "q": give the text to search for`)
	}
	format := in.Format
	if format == "" {
		format = "toon"
	}
	body, _, err := t.d.Search.Search(ctx, apiclient.SearchRequest{
		Q: in.Q, K: in.K, Offset: in.Offset, Tags: in.Tags, Domain: in.Domain, PublishedAfter: in.PublishedAfter,
		PublishedBefore: in.PublishedBefore, Weights: in.Weights, Fusion: in.Fusion, MMR: in.MMR, Expand: in.Expand,
		History: in.History, Generated: in.Generated, Explain: in.Explain, Format: format,
	})
	if err != nil {
		return nil, nil, toolError("search", err)
	}
	return text(string(body)), nil, nil
}

func (t *tools) crawlStatus(ctx context.Context, _ *mcp.CallToolRequest, in CrawlStatusInput) (*mcp.CallToolResult, any, error) {
	if t.d.Crawler == nil {
		return nil, nil, errNoCrawler
	}
	st, err := t.d.Crawler.Crawl(ctx, strings.TrimSpace(in.ID))
	if err != nil {
		return nil, nil, toolError("crawl_status", err)
	}
	return render(st, in.Format)
}

var errNoCrawler = errors.New("crawling is not configured on this MCP server: set KGS_CRAWLER_URL (or --crawler-url)")

func (t *tools) getDocument(ctx context.Context, _ *mcp.CallToolRequest, in GetDocumentInput) (*mcp.CallToolResult, any, error) {
	if t.d.Crawler == nil {
		return nil, nil, errNoCrawler
	}
	id := strings.TrimSpace(in.ID)
	if _, err := strconv.ParseInt(id, 10, 64); err == nil && len(id) <= 20 {
		ch, err := t.d.Crawler.Chunk(ctx, id)
		if err != nil {
			return nil, nil, toolError("get_document", err)
		}
		return render(ch, in.Format)
	}
	if !isHex(id) {
		return nil, nil, fmt.Errorf(`invalid argument "id": %q is neither a chunk id (digits, the chunk_id of a search result) nor a document id (32 hex characters)`, clip(id))
	}
	withChunks := in.Chunks == nil || *in.Chunks
	doc, err := t.d.Crawler.Document(ctx, id, withChunks)
	if err != nil {
		return nil, nil, toolError("get_document", err)
	}
	maxChunks := in.MaxChunks
	if maxChunks == 0 {
		maxChunks = 50
	}
	out := struct {
		*apiclient.Document
		ChunksShown int `json:"chunks_shown"`
	}{Document: doc}
	if len(doc.Chunks) > maxChunks {
		doc.Chunks = doc.Chunks[:maxChunks]
	}
	out.ChunksShown = len(doc.Chunks)
	return render(out, in.Format)
}

func isHex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return true
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func (t *tools) findEntities(ctx context.Context, _ *mcp.CallToolRequest, in FindEntitiesInput) (*mcp.CallToolResult, any, error) {
	if t.d.Graph == nil {
		return nil, nil, errNoGraph
	}
	if strings.TrimSpace(in.Prefix) == "" {
		return nil, nil, errors.New(`invalid argument "prefix": give the first letters of an entity name`)
	}
	limit := in.Limit
	if limit == 0 {
		limit = 10
	}
	list, err := t.d.Graph.Entities(ctx, strings.TrimSpace(in.Prefix), in.Type, limit)
	if err != nil {
		return nil, nil, toolError("find_entities", err)
	}
	return render(list, in.Format)
}

var errNoGraph = errors.New("the knowledge graph is not configured on this MCP server: set KGS_KG_URL (or --kg-url)")

func (t *tools) relatedEntities(ctx context.Context, _ *mcp.CallToolRequest, in RelatedEntitiesInput) (*mcp.CallToolResult, any, error) {
	if t.d.Graph == nil {
		return nil, nil, errNoGraph
	}
	for i, e := range in.Entities {
		if strings.TrimSpace(e) == "" {
			return nil, nil, fmt.Errorf(`invalid argument "entities[%d]": empty name; give entity names such as "PostgreSQL"`, i)
		}
	}
	limit := in.Limit
	if limit == 0 {
		limit = 20
	}
	res, err := t.d.Graph.Expand(ctx, kgapi.ExpandRequest{Entities: in.Entities, MaxHops: in.MaxHops, Limit: limit,
		MinConfidence: in.MinConfidence, RelationTypes: in.RelationTypes})
	if err != nil {
		return nil, nil, toolError("related_entities", err)
	}
	return render(res, in.Format)
}

// toolError says what went wrong in words that tell the agent what to change.
func toolError(tool string, err error) error {
	var ae *apiclient.Error
	var se *kgapi.StatusError
	switch {
	case errors.As(err, &ae) && ae.Status == 400 && ae.Field != "":
		return fmt.Errorf("invalid argument %q: %s; fix it and call %s again", ae.Field, detail(ae), tool)
	case errors.As(err, &ae) && (ae.Status == 401 || ae.Status == 403):
		return fmt.Errorf("the %s service refused the API key (%d): configure the MCP server with a valid KGS_API_KEY", ae.Service, ae.Status)
	case errors.As(err, &ae) && ae.Status == 404:
		return fmt.Errorf("not found: %s; check the id", detail(ae))
	case errors.As(err, &ae) && ae.Status < 500:
		return fmt.Errorf("the %s service refused the request (%d): %s", ae.Service, ae.Status, detail(ae))
	case errors.As(err, &ae):
		return fmt.Errorf("the %s service failed (%d): %s; retry later", ae.Service, ae.Status, detail(ae))
	case errors.As(err, &se) && se.Status == 404:
		return fmt.Errorf("not found: %s", se.Detail)
	case errors.As(err, &se):
		return fmt.Errorf("invalid arguments: %s; fix them and call %s again", se.Detail, tool)
	case errors.Is(err, apiclient.ErrUnreachable), errors.Is(err, kgapi.ErrUnavailable):
		return fmt.Errorf("a kgsearch service is not reachable (%w); it may be stopped: retry later", err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s timed out; retry, or ask for less", tool)
	}
	return fmt.Errorf("%s failed: %w", tool, err)
}

func detail(e *apiclient.Error) string {
	if e.Detail != "" {
		return e.Detail
	}
	return e.Title
}

// progressStep is the smallest pause between two progress notifications.
const progressStep = 200 * time.Millisecond
