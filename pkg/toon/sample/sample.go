// Package sample builds the deterministic payloads used by the pkg/toon
// benchmarks and by cmd/toontokens: a search response, a wide table and a
// deeply nested configuration. The values are generated, not random, so
// numbers are comparable between runs.
package sample

import (
	"fmt"
	"strings"
	"time"
)

// SearchResult is one ranked hit with its score breakdown flattened so that
// a result list is a uniform array of flat objects (tabular in TOON).
type SearchResult struct {
	Rank      int     `json:"rank"`
	DocID     string  `json:"doc_id"`
	ChunkID   int64   `json:"chunk_id"`
	URL       string  `json:"url"`
	Title     string  `json:"title"`
	Snippet   string  `json:"snippet"`
	Score     float64 `json:"score"`
	Vector    float64 `json:"vector"`
	Graph     float64 `json:"graph"`
	BM25      float64 `json:"bm25"`
	Recency   float64 `json:"recency"`
	TitleSig  float64 `json:"title_signal"`
	Published string  `json:"published"`
	Start     int     `json:"start"`
	End       int     `json:"end"`
}

// Entity is a query or related entity.
type Entity struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"`
	Confidence float64 `json:"confidence"`
}

// Timing is the duration of one search phase.
type Timing struct {
	Phase string  `json:"phase"`
	MS    float64 `json:"ms"`
}

// SearchResponse is a realistic answer of the search service.
type SearchResponse struct {
	Query       string         `json:"query"`
	Intent      string         `json:"intent"`
	Confidence  float64        `json:"confidence"`
	Total       int            `json:"total"`
	Entities    []Entity       `json:"entities"`
	Results     []SearchResult `json:"results"`
	Related     []Entity       `json:"related_entities"`
	Suggestions []string       `json:"suggested_queries"`
	Timings     []Timing       `json:"timings"`
	Degraded    []string       `json:"degraded"`
	GeneratedAt time.Time      `json:"generated_at"`
}

var words = strings.Fields(`graph vector search index chunk entity relation
crawler embedding ranking query token language model retrieval database
cosine distance neighbour document section heading paragraph signal weight
fusion reciprocal diversity snippet context citation offset latency cache
golang service handler request response stream batch worker queue replica`)

type gen struct{ x uint64 }

func (g *gen) next() uint64 {
	g.x = g.x*6364136223846793005 + 1442695040888963407
	return g.x >> 33
}

func (g *gen) word() string { return words[g.next()%uint64(len(words))] }

func (g *gen) words(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(g.word())
	}
	return b.String()
}

func (g *gen) unit() float64 { return float64(g.next()%10000) / 10000 }

// Search returns a search response with n results.
func Search(n int) SearchResponse {
	g := gen{x: 42}
	r := SearchResponse{
		Query:      "how does reciprocal rank fusion combine vector and bm25 scores",
		Intent:     "informational",
		Confidence: 0.87,
		Total:      n * 7,
		Entities: []Entity{
			{Name: "reciprocal rank fusion", Type: "algorithm", Confidence: 0.93},
			{Name: "bm25", Type: "algorithm", Confidence: 0.91},
			{Name: "vector search", Type: "concept", Confidence: 0.78},
		},
		Suggestions: []string{"rrf vs weighted sum", "bm25 parameters k1 b", "hybrid search mariadb vector"},
		Timings: []Timing{
			{"parse", 0.41}, {"retrieve", 38.2}, {"expand", 6.7}, {"rank", 2.9}, {"format", 0.8},
		},
		Degraded:    []string{},
		GeneratedAt: time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC),
	}
	for i := 0; i < n; i++ {
		host := []string{"go.dev", "en.wikipedia.org", "mariadb.com", "neo4j.com", "blevesearch.com"}[g.next()%5]
		slug := strings.ReplaceAll(g.words(3), " ", "-")
		start := int(g.next() % 20000)
		title := g.words(5)
		r.Results = append(r.Results, SearchResult{
			Rank:      i + 1,
			DocID:     fmt.Sprintf("doc_%08x", g.next()),
			ChunkID:   int64(g.next() % 1000000),
			URL:       "https://" + host + "/docs/" + slug,
			Title:     strings.ToUpper(title[:1]) + title[1:],
			Snippet:   g.words(22) + ".",
			Score:     float64(int((1-float64(i)/float64(n))*10000)) / 10000,
			Vector:    g.unit(),
			Graph:     g.unit(),
			BM25:      g.unit(),
			Recency:   []float64{1, 0.8, 0.6, 0.4, 0.3, 0.2}[g.next()%6],
			TitleSig:  g.unit(),
			Published: time.Date(2020+int(g.next()%6), time.Month(1+g.next()%12), 1+int(g.next()%28), 0, 0, 0, 0, time.UTC).Format("2006-01-02"),
			Start:     start,
			End:       start + 400 + int(g.next()%600),
		})
	}
	for i := 0; i < 8; i++ {
		r.Related = append(r.Related, Entity{Name: g.words(2), Type: []string{"concept", "tool", "algorithm"}[g.next()%3], Confidence: g.unit()})
	}
	return r
}

// Row is one row of the table payload.
type Row struct {
	ID       int     `json:"id"`
	SKU      string  `json:"sku"`
	Name     string  `json:"name"`
	Category string  `json:"category"`
	Price    float64 `json:"price"`
	Qty      int     `json:"qty"`
	Active   bool    `json:"active"`
	Updated  string  `json:"updated"`
}

// Table returns rows uniform rows.
func Table(rows int) []Row {
	g := gen{x: 7}
	out := make([]Row, rows)
	for i := range out {
		out[i] = Row{
			ID:       i + 1,
			SKU:      fmt.Sprintf("SKU-%05d", g.next()%100000),
			Name:     g.words(2),
			Category: []string{"books", "tools", "garden", "kitchen", "toys"}[g.next()%5],
			Price:    float64(g.next()%100000) / 100,
			Qty:      int(g.next() % 500),
			Active:   g.next()%4 != 0,
			Updated:  time.Date(2026, time.Month(1+g.next()%12), 1+int(g.next()%28), int(g.next()%24), 0, 0, 0, time.UTC).Format(time.RFC3339),
		}
	}
	return out
}

// Config returns a deeply nested configuration as generic JSON values
// (map[string]any), the shape produced by decoding arbitrary JSON.
func Config() map[string]any {
	g := gen{x: 99}
	services := map[string]any{}
	for _, name := range []string{"search", "crawler", "kg", "gateway"} {
		replicas := []any{}
		for i := 0; i < 3; i++ {
			replicas = append(replicas, map[string]any{
				"host":   fmt.Sprintf("%s-%d.internal", name, i),
				"port":   float64(8080 + i),
				"weight": float64(g.next()%100) / 100,
				"labels": map[string]any{"zone": []any{"a", "b", "c"}[i], "tier": "prod"},
			})
		}
		services[name] = map[string]any{
			"http": map[string]any{
				"listen": ":" + fmt.Sprint(8080+g.next()%10),
				"timeouts": map[string]any{
					"read":  "5s",
					"write": "10s",
					"idle":  map[string]any{"seconds": float64(60), "jitter": map[string]any{"min": 0.1, "max": 0.5}},
				},
				"cors": map[string]any{"origins": []any{"https://a.example", "https://b.example"}, "credentials": false},
			},
			"storage": map[string]any{
				"mariadb": map[string]any{
					"dsn":  "kgsearch:***@tcp(127.0.0.1:13306)/kgsearch",
					"pool": map[string]any{"max_open": float64(20), "max_idle": float64(5), "lifetime": "30m"},
					"vector": map[string]any{
						"dimensions": float64(384),
						"index":      map[string]any{"type": "hnsw", "m": float64(16), "distance": "cosine"},
					},
				},
				"neo4j": map[string]any{"uri": "bolt://127.0.0.1:17687", "database": "neo4j"},
			},
			"features": []any{g.word(), g.word(), g.word()},
			"replicas": replicas,
			"ranking": map[string]any{
				"weights": map[string]any{"vector": 0.35, "graph": 0.25, "bm25": 0.2, "recency": 0.1, "title": 0.1},
				"mmr":     map[string]any{"enabled": true, "lambda": 0.7},
			},
		}
	}
	return map[string]any{
		"version":  "3",
		"services": services,
		"logging":  map[string]any{"level": "info", "format": "json", "sinks": []any{map[string]any{"type": "stdout"}, map[string]any{"type": "file", "path": "/var/log/kgsearch.log", "rotate": map[string]any{"max_mb": float64(100), "keep": float64(7)}}}},
	}
}
