package mcpserver

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tools' arguments. The field comments (jsonschema tags) become the input
// schemas' descriptions, which is all an agent knows about the arguments; the
// limits are added to the schemas by schemaFor and checked again by the services.

// SearchInput are the arguments of the search tool (the search API's fields).
type SearchInput struct {
	Q               string   `json:"q" jsonschema:"what to search for: a question or keywords, at most 2048 bytes"`
	K               int      `json:"k,omitempty" jsonschema:"number of results, 1..100 (default 10)"`
	Offset          int      `json:"offset,omitempty" jsonschema:"results to skip, for the next page: 0..1000 (default 0)"`
	Tags            []string `json:"tags,omitempty" jsonschema:"only documents carrying every one of these crawl tags"`
	Domain          string   `json:"domain,omitempty" jsonschema:"only documents from this exact host name, without port, e.g. docs.python.org or 127.0.0.1"`
	PublishedAfter  string   `json:"published_after,omitempty" jsonschema:"only documents published at or after this date: RFC 3339 or YYYY-MM-DD"`
	PublishedBefore string   `json:"published_before,omitempty" jsonschema:"only documents published before this date: RFC 3339 or YYYY-MM-DD"`
	Weights         string   `json:"weights,omitempty" jsonschema:"signal weights such as vector:0.5,bm25:0.5 (signals vector, graph, bm25, recency, title; 0 or leaving one out switches it off; default vector:0.3889,graph:0.2778,bm25:0.2222,recency:0.1111, title 0)"`
	Fusion          string   `json:"fusion,omitempty" jsonschema:"how signals combine: weighted (default) or rrf (reciprocal rank fusion)"`
	MMR             *float64 `json:"mmr,omitempty" jsonschema:"diversify results with MMR: lambda in [0,1], lower is more diverse (default off)"`
	Expand          *bool    `json:"expand,omitempty" jsonschema:"expand the query's entities through the knowledge graph (default true)"`
	History         string   `json:"history,omitempty" jsonschema:"version-history pages (release notes, changelogs, what's new): demote (default; they rank lower unless the query asks about versions or changes) or keep"`
	Generated       string   `json:"generated,omitempty" jsonschema:"source listings and generated indexes (Sphinx _modules/ and genindex pages, module indexes, whole-site tables of contents): demote (default; they rank lower, source listings keep their score when the query asks for source code) or keep"`
	Explain         bool     `json:"explain,omitempty" jsonschema:"add how the score was computed: weights, hits and time per retriever"`
	Format          string   `json:"format,omitempty" jsonschema:"answer format: toon (default, compact tables) or json"`
}

// CrawlInput are the arguments of the crawl tool.
type CrawlInput struct {
	URL            string   `json:"url" jsonschema:"the http(s) page to start from, e.g. https://docs.python.org/3/library/"`
	MaxPages       int      `json:"max_pages,omitempty" jsonschema:"most pages to process: stored, unchanged, empty or deleted; failures and skips do not count (default 100; the crawler caps it)"`
	MaxDepth       *int     `json:"max_depth,omitempty" jsonschema:"link distance from the start page, 0..20 (default 2)"`
	AllowedDomains []string `json:"allowed_domains,omitempty" jsonschema:"hosts in scope, subdomains included (default the start URL's host)"`
	Include        []string `json:"include,omitempty" jsonschema:"regular expressions; when given only URLs matching one are crawled"`
	Exclude        []string `json:"exclude,omitempty" jsonschema:"regular expressions; URLs matching one are not crawled"`
	Tags           []string `json:"tags,omitempty" jsonschema:"tags of every page the crawl processes, to filter searches later; they replace the tags a page was stored with, also when it is unchanged"`
	RespectRobots  *bool    `json:"respect_robots,omitempty" jsonschema:"obey robots.txt (default true)"`
	UseSitemap     *bool    `json:"use_sitemap,omitempty" jsonschema:"seed from the site's sitemap (default true)"`
	Recrawl        bool     `json:"recrawl,omitempty" jsonschema:"check known pages for changes with conditional requests"`
	Prune          bool     `json:"prune,omitempty" jsonschema:"when the crawl ends having seen its whole scope, delete the stored pages in that scope (under the start URL's directory) that it did not reach: pages no page links to any more. A crawl that may not have seen everything (max_pages reached with URLs still queued, links beyond max_depth to pages it did not reach, failed or skipped pages) deletes nothing and says why in its warnings (default false)"`
	Wait           *bool    `json:"wait,omitempty" jsonschema:"wait for the crawl to end, reporting progress (default true); false returns the job id at once"`
	WaitSeconds    int      `json:"wait_seconds,omitempty" jsonschema:"longest wait, 1..3600 seconds (default 600); the crawl goes on afterwards: follow it with crawl_status"`
	Format         string   `json:"format,omitempty" jsonschema:"answer format: toon (default) or json"`
}

// CrawlStatusInput are the arguments of crawl_status.
type CrawlStatusInput struct {
	ID     string `json:"id" jsonschema:"the crawl job id returned by crawl"`
	Format string `json:"format,omitempty" jsonschema:"answer format: toon (default) or json"`
}

// GetDocumentInput are the arguments of get_document.
type GetDocumentInput struct {
	ID        string `json:"id" jsonschema:"a chunk id (the chunk_id of a search result, digits) or a document id (32 hex characters)"`
	Chunks    *bool  `json:"chunks,omitempty" jsonschema:"for a document: include its chunks with their text and offsets (default true)"`
	MaxChunks int    `json:"max_chunks,omitempty" jsonschema:"for a document: most chunks returned, 1..500 (default 50)"`
	Format    string `json:"format,omitempty" jsonschema:"answer format: toon (default) or json"`
}

// FindEntitiesInput are the arguments of find_entities.
type FindEntitiesInput struct {
	Prefix string `json:"prefix" jsonschema:"the start of an entity name, e.g. postg; case does not matter"`
	Type   string `json:"type,omitempty" jsonschema:"only entities of this type, e.g. database, framework, programming_language, library, concept"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most entities, 1..100 (default 10)"`
	Format string `json:"format,omitempty" jsonschema:"answer format: toon (default) or json"`
}

// RelatedEntitiesInput are the arguments of related_entities.
type RelatedEntitiesInput struct {
	Entities      []string `json:"entities" jsonschema:"entity names or ids to start from, e.g. [\"PostgreSQL\"] (1..20)"`
	MaxHops       int      `json:"max_hops,omitempty" jsonschema:"path length: 1 or 2 (default 1)"`
	Limit         int      `json:"limit,omitempty" jsonschema:"most related entities, 1..100 (default 20)"`
	MinConfidence float64  `json:"min_confidence,omitempty" jsonschema:"weakest edge confidence on a path, 0..1 (default 0)"`
	RelationTypes []string `json:"relation_types,omitempty" jsonschema:"only these relations: USES, IS_A, DEPENDS_ON, PART_OF, SUPPORTS, BUILT_ON, EXTENDS, IMPLEMENTS, REPLACES, WRITTEN_IN, RUNS_ON, PROVIDES, ALTERNATIVE_TO, DEVELOPED_BY, VERSION_OF, CO_OCCURS, LINKS_TO"`
	Format        string   `json:"format,omitempty" jsonschema:"answer format: toon (default) or json"`
}

// limit is the range and choices and choices added to the generated schemas.
type limit struct {
	min, max  *float64
	enum      []any
	minItems  *int
	maxItems  *int
	minLength *int
	maxLength *int
}

func f(v float64) *float64 { return &v }
func n(v int) *int         { return &v }

var formats = []any{"toon", "json"}

// schemaFor generates T's input schema and adds the limits of its properties.
func schemaFor[T any](limits map[string]limit) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: input schema: %v", err)) // a programming error, caught by the tests
	}
	for name, l := range limits {
		p := s.Properties[name]
		if p == nil {
			panic("mcpserver: no property " + name)
		}
		p.Minimum, p.Maximum, p.MinItems, p.MaxItems = l.min, l.max, l.minItems, l.maxItems
		p.MinLength, p.MaxLength = l.minLength, l.maxLength
		if l.enum != nil {
			p.Enum = l.enum
		}
	}
	return s
}
