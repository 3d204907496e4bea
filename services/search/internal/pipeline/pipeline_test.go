package pipeline_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

var now = searchtest.Now

func corpus() []searchtest.Doc {
	return []searchtest.Doc{
		{URL: "https://docs.example.org/postgres/replication", Title: "PostgreSQL streaming replication",
			Tags: []string{"postgres", "database"}, Published: now.AddDate(0, 0, -3), Chunks: []searchtest.Chunk{
				{Heading: "Overview", Text: "Streaming replication in PostgreSQL ships WAL records from the primary server to one or more standby servers as they are generated."},
				{Heading: "Standby setup", Text: "Configure the standby with primary_conninfo and create a standby.signal file; the standby then connects to the primary and replays WAL."},
			}},
		{URL: "https://docs.example.org/redis/persistence", Title: "Redis persistence",
			Tags: []string{"redis", "database"}, Published: now.AddDate(0, 0, -200), Chunks: []searchtest.Chunk{
				{Heading: "Snapshots", Text: "Redis writes point-in-time snapshots of the dataset (RDB files) at configured intervals."},
				{Heading: "Append-only file", Text: "The append-only file (AOF) logs every write operation received by the Redis server, for durability."},
			}},
		{URL: "https://blog.example.com/python/asyncio", Title: "Python asyncio tutorial",
			Tags: []string{"python"}, Published: now.AddDate(0, 0, -40), Chunks: []searchtest.Chunk{
				{Heading: "Event loop", Text: "The asyncio module in Python runs coroutines on an event loop; await suspends a coroutine until its result is ready."},
			}},
		{URL: "https://docs.example.org/kubernetes/pods", Title: "Kubernetes pods",
			Tags: []string{"kubernetes"}, Chunks: []searchtest.Chunk{
				{Heading: "Pods", Text: "A pod is the smallest deployable unit in Kubernetes; the containers of a pod share network and storage."},
			}},
		{URL: "https://blog.example.com/postgres/vacuum", Title: "Tuning PostgreSQL autovacuum",
			Tags: []string{"postgres"}, Published: now.AddDate(0, 0, -400), Chunks: []searchtest.Chunk{
				{Heading: "Autovacuum", Text: "Autovacuum in PostgreSQL removes dead tuples; tune autovacuum_vacuum_scale_factor for large tables."},
			}},
	}
}

func search(t *testing.T, e *searchtest.Env, req pipeline.Request) *pipeline.Response {
	t.Helper()
	if req.K == 0 {
		req.K = 10
	}
	resp, err := e.Pipeline.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("Search(%q): %v", req.Query, err)
	}
	return resp
}

func urls(r *pipeline.Response) []string {
	out := make([]string, len(r.Results))
	for i, x := range r.Results {
		out[i] = x.URL
	}
	return out
}

func TestSearchRanksAndReports(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, corpus()...)
	resp := search(t, e, pipeline.Request{Query: "PostgreSQL streaming replication standby", Expand: true, Explain: true})

	if len(resp.Results) == 0 {
		t.Fatal("got no results")
	}
	top := resp.Results[0]
	if top.URL != "https://docs.example.org/postgres/replication" {
		t.Errorf("top result: got %s, want the replication page; all: %v", top.URL, urls(resp))
	}
	if len(resp.Degraded) != 0 {
		t.Errorf("degraded: got %v, want none", resp.Degraded)
	}
	// One result per document.
	seen := map[string]bool{}
	for _, r := range resp.Results {
		if seen[r.URL] {
			t.Errorf("document %s returned twice", r.URL)
		}
		seen[r.URL] = true
	}
	// Every signal that found the top chunk shows in its source and breakdown.
	for _, s := range []string{"vector", "bm25", "graph"} {
		if !strings.Contains(top.Source, s) {
			t.Errorf("top source: got %q, want it to contain %s", top.Source, s)
		}
	}
	b := top.ScoreBreakdown
	if b.BM25 != 1 || b.Graph <= 0 || b.Vector <= 0 || b.Recency != 1 || b.Title <= 0 {
		t.Errorf("top breakdown: got %+v, want bm25 1 (best BM25 hit), graph and vector > 0, recency 1 (3 days old), title > 0", b)
	}
	// The final score is the weighted sum of the breakdown with the default weights.
	w := ranker.DefaultWeights()
	want := w.Get(ranker.Vector)*b.Vector + w.Get(ranker.Graph)*b.Graph + w.Get(ranker.BM25)*b.BM25 +
		w.Get(ranker.Recency)*b.Recency + w.Get(ranker.Title)*b.Title
	if math.Abs(top.Score-want) > 1e-3 {
		t.Errorf("top score: got %.4f, want the weighted sum %.4f", top.Score, want)
	}
	if top.Timestamp != now.AddDate(0, 0, -3).Format(time.RFC3339) {
		t.Errorf("timestamp: got %q", top.Timestamp)
	}
	if diff := cmp.Diff([]string{"postgres", "database"}, top.Tags); diff != "" {
		t.Errorf("tags (-want +got):\n%s", diff)
	}
	if !containsFold(top.EntityMentions, "PostgreSQL") {
		t.Errorf("entity mentions: got %v, want PostgreSQL among them", top.EntityMentions)
	}
	if top.End <= top.Start || top.ChunkID == "" || top.Preview == "" {
		t.Errorf("citation: got chunk %q [%d,%d) preview %q", top.ChunkID, top.Start, top.End, top.Preview)
	}
	if top.Rank != 1 || resp.ResultCount != len(resp.Results) {
		t.Errorf("rank %d, result_count %d for %d results", top.Rank, resp.ResultCount, len(resp.Results))
	}
	// Query understanding.
	if !containsEntity(resp.Query.Entities, "PostgreSQL") {
		t.Errorf("query entities: got %+v, want PostgreSQL", resp.Query.Entities)
	}
	if resp.Query.Normalized != "postgresql streaming replication standby" {
		t.Errorf("normalized: got %q", resp.Query.Normalized)
	}
	// Token counts: TOON must be cheaper than JSON.
	if resp.Tokens.JSON <= 0 || resp.Tokens.TOON <= 0 || resp.Tokens.TOON >= resp.Tokens.JSON || resp.Tokens.SavedPct <= 0 {
		t.Errorf("tokens: got %+v, want toon < json and saved_pct > 0", resp.Tokens)
	}
	if resp.TotalTimeMS <= 0 || resp.PhaseMS.Retrieve <= 0 || resp.PhaseMS.Rank <= 0 {
		t.Errorf("timings: got total %v, phases %+v", resp.TotalTimeMS, resp.PhaseMS)
	}
	if resp.Explain == nil || resp.Explain.Retrievers["vector"].Hits == 0 || resp.Explain.Retrievers["bm25"].Hits == 0 || resp.Explain.Retrievers["graph"].Hits == 0 {
		t.Errorf("explain: got %+v, want hits from vector, bm25 and graph", resp.Explain)
	}
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func containsEntity(list []pipeline.QueryEntity, name string) bool {
	for _, e := range list {
		if strings.EqualFold(e.Text, name) {
			return true
		}
	}
	return false
}

func TestExpansionCountsAtSevenTenths(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{ManualKG: true})
	docs := corpus()
	e.Add(t, docs...)
	pg := e.Finder.Query("postgresql")
	redis := e.Finder.Query("redis")
	if len(pg) != 1 || len(redis) != 1 {
		t.Fatalf("finder: postgresql → %+v, redis → %+v; want one entity each", pg, redis)
	}
	chunkOf := func(url string, ordinal int) string {
		return strconv.FormatInt(store.ChunkID(store.DocumentID(url), ordinal), 10)
	}
	docOf := map[string]string{}
	for _, d := range docs {
		for i := range d.Chunks {
			docOf[chunkOf(d.URL, i)] = store.DocumentID(d.URL)
		}
	}
	lookup := func(c string) string { return docOf[c] }
	replication := chunkOf(docs[0].URL, 0)
	aof := chunkOf(docs[1].URL, 1)
	e.KG.AddEntity(pg[0].ID, "PostgreSQL", pg[0].Type, map[string]float64{replication: 4}, lookup)
	e.KG.AddEntity(redis[0].ID, "Redis", redis[0].Type, map[string]float64{aof: 4}, lookup)
	e.KG.AddRelation(pg[0].ID, "ALTERNATIVE_TO", redis[0].ID, 0.8)

	resp := search(t, e, pipeline.Request{Query: "postgresql", Expand: true, K: 10})
	var got *pipeline.Result
	for i := range resp.Results {
		if resp.Results[i].ChunkID == aof {
			got = &resp.Results[i]
		}
	}
	if got == nil {
		t.Fatalf("the Redis AOF chunk (reached only through expansion) is missing: %v", urls(resp))
	}
	// Same raw graph score as the direct hit (4), so normalised 1, times 0.7.
	if got.ScoreBreakdown.Graph != 0.7 {
		t.Errorf("expanded chunk graph signal: got %v, want 0.7", got.ScoreBreakdown.Graph)
	}
	if !strings.Contains(got.Source, "expansion") {
		t.Errorf("source: got %q, want expansion", got.Source)
	}
	ex := resp.Exploration
	if ex.OriginalEntityCount != 1 || ex.ExpandedEntityCount != 1 {
		t.Errorf("exploration counts: got original %d expanded %d, want 1 and 1", ex.OriginalEntityCount, ex.ExpandedEntityCount)
	}
	wantRel := []pipeline.Relationship{{From: "PostgreSQL", Relation: "ALTERNATIVE_TO", To: "Redis"}}
	if diff := cmp.Diff(wantRel, ex.ExpansionRelationships); diff != "" {
		t.Errorf("expansion relationships (-want +got):\n%s", diff)
	}
	if len(ex.DiscoveredEntities) != 1 || !ex.DiscoveredEntities[0].Used || !strings.Contains(ex.DiscoveredEntities[0].Reason, "ALTERNATIVE_TO") {
		t.Errorf("discovered: got %+v, want Redis used with its path as reason", ex.DiscoveredEntities)
	}
	// Related entities are what the top pages are about, read from them; expansion's
	// neighbours of the query entities are not listed for being neighbours (format.go).
	for _, r := range resp.RelatedEntities {
		if r.Source != "results" || strings.EqualFold(r.Name, "PostgreSQL") {
			t.Errorf("related entity %+v: want entities of the results other than the query's", r)
		}
	}
	for _, sq := range resp.SuggestedQueries {
		if strings.HasPrefix(sq, "postgresql ") {
			t.Errorf("suggested query %q appends a word to the query", sq)
		}
	}

	// Without expansion the chunk has no graph signal.
	resp = search(t, e, pipeline.Request{Query: "postgresql", Expand: false})
	for _, r := range resp.Results {
		if r.ChunkID == aof && r.ScoreBreakdown.Graph != 0 {
			t.Errorf("expand=false: AOF chunk graph signal %v, want 0", r.ScoreBreakdown.Graph)
		}
	}
	if resp.Exploration.ExpandedEntityCount != 0 {
		t.Errorf("expand=false: expanded %d entities", resp.Exploration.ExpandedEntityCount)
	}

	// A relation under the confidence threshold is reported but not used.
	e.KG.AddRelation(pg[0].ID, "CO_OCCURS", e.Finder.Query("kubernetes")[0].ID, 0.1)
	e.KG.AddEntity(e.Finder.Query("kubernetes")[0].ID, "Kubernetes", "platform", map[string]float64{chunkOf(docs[3].URL, 0): 1}, lookup)
	resp = search(t, e, pipeline.Request{Query: "postgresql", Expand: true})
	for _, r := range resp.Results {
		if r.URL == docs[3].URL && r.ScoreBreakdown.Graph != 0 {
			t.Errorf("low-confidence expansion: Kubernetes page got graph %v, want 0", r.ScoreBreakdown.Graph)
		}
	}
}

func TestKGDownDegradesGraph(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, corpus()...)
	req := pipeline.Request{Query: "PostgreSQL replication", Expand: true, Explain: true}
	before := search(t, e, req)

	e.KG.SetDown(true)
	resp := search(t, e, req)
	if diff := cmp.Diff([]string{"graph"}, resp.Degraded); diff != "" {
		t.Errorf("degraded (-want +got):\n%s", diff)
	}
	if len(resp.Results) == 0 || resp.Results[0].URL != before.Results[0].URL {
		t.Errorf("kg down: got %v, want the same top result %s", urls(resp), before.Results[0].URL)
	}
	for _, r := range resp.Results {
		if r.ScoreBreakdown.Graph != 0 {
			t.Errorf("kg down: %s has graph signal %v", r.URL, r.ScoreBreakdown.Graph)
		}
	}
	// The weights were renormalised without graph: vector 0.35/0.75 ...
	want, _ := ranker.DefaultWeights().Renormalize(ranker.Graph)
	if resp.Explain.Weights != want.String() {
		t.Errorf("weights: got %s, want %s", resp.Explain.Weights, want)
	}
	b := resp.Results[0].ScoreBreakdown
	sum := want.Get(ranker.Vector)*b.Vector + want.Get(ranker.BM25)*b.BM25 + want.Get(ranker.Recency)*b.Recency + want.Get(ranker.Title)*b.Title
	if math.Abs(resp.Results[0].Score-sum) > 1e-3 {
		t.Errorf("score with kg down: got %.4f, want %.4f", resp.Results[0].Score, sum)
	}

	// kg gone altogether (connection refused).
	e.KG.Close()
	resp = search(t, e, req)
	if diff := cmp.Diff([]string{"graph"}, resp.Degraded); diff != "" || len(resp.Results) == 0 {
		t.Errorf("kg closed: degraded diff %s, %d results", diff, len(resp.Results))
	}
}

func TestBM25DegradedUntilCaughtUp(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, corpus()...) // Add syncs: caught up
	// A second indexer over a fresh index has not caught up yet.
	e2 := searchtest.New(t, searchtest.Options{})
	for _, d := range corpus() {
		doc := store.Document{URL: d.URL, Title: d.Title}
		v, _ := e2.Embedder.Embed(context.Background(), []string{d.Chunks[0].Text})
		if _, err := e2.Store.UpsertDocument(context.Background(), &doc, []store.Chunk{{Text: d.Chunks[0].Text, Embedding: v[0], EndOffset: len(d.Chunks[0].Text)}}, nil); err != nil {
			t.Fatal(err)
		}
	}
	resp := search(t, e2, pipeline.Request{Query: "redis snapshots"})
	if diff := cmp.Diff([]string{"bm25"}, resp.Degraded); diff != "" {
		t.Errorf("before catch-up, degraded (-want +got):\n%s", diff)
	}
	if len(resp.Results) == 0 {
		t.Error("before catch-up: no results, want the vector results")
	}
	e2.Sync(t)
	resp = search(t, e2, pipeline.Request{Query: "redis snapshots"})
	if len(resp.Degraded) != 0 {
		t.Errorf("after catch-up, degraded: got %v, want none", resp.Degraded)
	}
	if len(resp.Results) == 0 || resp.Results[0].ScoreBreakdown.BM25 == 0 {
		t.Errorf("after catch-up: got %v, want a BM25 hit first", urls(resp))
	}
}

func TestAllRetrieversDown(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, corpus()...)
	e.KG.SetDown(true)
	e.Embedder.Close()
	e.Index.Close()
	_, err := e.Pipeline.Search(context.Background(), pipeline.Request{Query: "PostgreSQL replication", K: 5, Expand: true})
	var ue *pipeline.UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, pipeline.ErrUnavailable) {
		t.Fatalf("got %v, want an *UnavailableError", err)
	}
	for _, s := range []string{"vector", "graph", "bm25"} {
		if ue.Reasons[s] == "" {
			t.Errorf("reasons: got %v, want one for %s", ue.Reasons, s)
		}
	}
}

// TestStoreDown: with the store (MariaDB) unreachable the retrievers that do not
// need it still find candidates, but their text cannot be read. With none of it
// there is nothing to show: an UnavailableError naming the store (the API's 503),
// not an empty answer. With part of it cached, the answer shows what could be read
// and reports the store degraded.
func TestStoreDown(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, corpus()...)
	req := pipeline.Request{Query: "PostgreSQL replication", K: 5, Expand: true}
	warm := search(t, e, req) // reads every candidate's text through the chunk cache
	if len(warm.Results) == 0 || len(warm.Degraded) != 0 {
		t.Fatalf("before the outage: results %v, degraded %v", urls(warm), warm.Degraded)
	}
	replication := "https://docs.example.org/postgres/replication"
	if !slices.Contains(urls(warm), replication) {
		t.Fatalf("before the outage: %v, want %s among the results", urls(warm), replication)
	}
	e.Chunks.Forget(store.DocumentID(replication)) // its text must come from the store now
	if err := e.Store.Close(); err != nil {
		t.Fatal(err)
	}

	part := search(t, e, req)
	if !slices.Contains(part.Degraded, "store") {
		t.Errorf("part cached: degraded %v, want store among them", part.Degraded)
	}
	if len(part.Results) == 0 || slices.Contains(urls(part), replication) {
		t.Errorf("part cached: results %v, want the cached pages and not %s", urls(part), replication)
	}

	e.Chunks.Clear()
	_, err := e.Pipeline.Search(context.Background(), req)
	var ue *pipeline.UnavailableError
	if !errors.As(err, &ue) || !errors.Is(err, pipeline.ErrUnavailable) {
		t.Fatalf("nothing cached: got %v, want an *UnavailableError", err)
	}
	if ue.Reasons["store"] == "" || !strings.Contains(ue.Error(), "store") {
		t.Errorf("nothing cached: reasons %v (%q), want one for the store", ue.Reasons, ue.Error())
	}
}

func TestFilters(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, corpus()...)
	tests := []struct {
		name string
		req  pipeline.Request
		ok   func(r pipeline.Result) bool
	}{
		{"domain", pipeline.Request{Domain: "blog.example.com"}, func(r pipeline.Result) bool { return strings.HasPrefix(r.URL, "https://blog.example.com/") }},
		{"domain case-insensitive", pipeline.Request{Domain: "BLOG.example.com"}, func(r pipeline.Result) bool { return strings.HasPrefix(r.URL, "https://blog.example.com/") }},
		{"tag", pipeline.Request{Tags: []string{"database"}}, func(r pipeline.Result) bool { return containsFold(r.Tags, "database") }},
		{"two tags", pipeline.Request{Tags: []string{"postgres", "database"}}, func(r pipeline.Result) bool {
			return containsFold(r.Tags, "database") && containsFold(r.Tags, "postgres")
		}},
		{"published after", pipeline.Request{PublishedAfter: now.AddDate(0, 0, -100)}, func(r pipeline.Result) bool {
			ts, err := time.Parse(time.RFC3339, r.Timestamp)
			return err == nil && !ts.Before(now.AddDate(0, 0, -100))
		}},
		{"published before", pipeline.Request{PublishedBefore: now.AddDate(0, 0, -100)}, func(r pipeline.Result) bool {
			ts, err := time.Parse(time.RFC3339, r.Timestamp)
			return err == nil && ts.Before(now.AddDate(0, 0, -100))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Query = "PostgreSQL redis python kubernetes"
			tt.req.Expand = true
			resp := search(t, e, tt.req)
			if len(resp.Results) == 0 {
				t.Fatal("no results")
			}
			for _, r := range resp.Results {
				if !tt.ok(r) {
					t.Errorf("result %s (tags %v, %s) does not match the filter", r.URL, r.Tags, r.Timestamp)
				}
			}
		})
	}
}

func TestPagingAndFusion(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, corpus()...)
	all := search(t, e, pipeline.Request{Query: "PostgreSQL", K: 3, Expand: true})
	if len(all.Results) < 3 {
		t.Fatalf("got %d results, want 3", len(all.Results))
	}
	page := search(t, e, pipeline.Request{Query: "PostgreSQL", K: 2, Offset: 1, Expand: true})
	if diff := cmp.Diff(urls(all)[1:3], urls(page)); diff != "" {
		t.Errorf("offset 1 (-want +got):\n%s", diff)
	}
	if page.Results[0].Rank != 2 {
		t.Errorf("rank after offset 1: got %d, want 2", page.Results[0].Rank)
	}
	rrf := search(t, e, pipeline.Request{Query: "PostgreSQL", K: 3, Fusion: ranker.RRF, Expand: true, Explain: true})
	if rrf.Explain.Fusion != "rrf" || len(rrf.Results) == 0 || rrf.Results[0].Score > 1 {
		t.Errorf("rrf: fusion %q, results %v", rrf.Explain.Fusion, urls(rrf))
	}
	// A weight of 0 switches a signal off; bm25 alone ranks by BM25.
	w, _ := ranker.ParseWeights("bm25:1")
	bm := search(t, e, pipeline.Request{Query: "autovacuum dead tuples", Weights: w, Expand: true})
	if len(bm.Results) == 0 || bm.Results[0].URL != "https://blog.example.com/postgres/vacuum" || bm.Results[0].Score != bm.Results[0].ScoreBreakdown.BM25 {
		t.Errorf("bm25 only: got %+v", bm.Results)
	}
}

func TestBadRequests(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	tests := []struct {
		req   pipeline.Request
		field string
	}{
		{pipeline.Request{Query: ""}, "q"},
		{pipeline.Request{Query: "   "}, "q"},
		{pipeline.Request{Query: strings.Repeat("word ", 2000)}, "q"},
		{pipeline.Request{Query: "x", K: 101}, "k"},
		{pipeline.Request{Query: "x", K: -1}, "k"},
		{pipeline.Request{Query: "x", Offset: -1}, "offset"},
		{pipeline.Request{Query: "x", MMR: true, Lambda: 1.5}, "mmr"},
		{pipeline.Request{Query: "x", Fusion: "borda"}, "fusion"},
		{pipeline.Request{Query: "x", Domain: "a.com' OR 1=1 --"}, "domain"},
		{pipeline.Request{Query: "x", PublishedAfter: now, PublishedBefore: now.AddDate(0, 0, -1)}, "published_after"},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			_, err := e.Pipeline.Search(context.Background(), tt.req)
			var fe *pipeline.FieldError
			if !errors.As(err, &fe) || fe.Field != tt.field {
				t.Errorf("got %v, want a FieldError for %s", err, tt.field)
			}
		})
	}
}

func TestNoEntitiesDropsGraphWeight(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	e.Add(t, corpus()...)
	resp := search(t, e, pipeline.Request{Query: "cleanup starts earlier", Explain: true})
	if len(resp.Query.Entities) != 0 {
		t.Fatalf("query entities: got %+v, want none for this test", resp.Query.Entities)
	}
	want, _ := ranker.DefaultWeights().Renormalize(ranker.Graph)
	if resp.Explain.Weights != want.String() || len(resp.Degraded) != 0 {
		t.Errorf("weights %s degraded %v; want %s and nothing degraded", resp.Explain.Weights, resp.Degraded, want)
	}
}

func TestSuggestionsNeverAppendToTheQuery(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	var docs []searchtest.Doc
	for i, topic := range []string{"Sockets", "Sockets tuning", "Threads", "Sockets security"} {
		docs = append(docs, searchtest.Doc{URL: "https://docs.example.org/net/" + strconv.Itoa(i),
			Title:  topic + " — Example Manual",
			Chunks: []searchtest.Chunk{{Heading: topic, Text: "Network programming notes about " + strings.ToLower(topic) + " and servers."}}})
	}
	e.Add(t, docs...)
	resp := search(t, e, pipeline.Request{Query: "network programming servers"})
	for _, s := range resp.SuggestedQueries {
		if strings.HasPrefix(s, "network programming servers ") || strings.Contains(s, "manual") {
			t.Errorf("suggestion %q appends a word to the query or uses site boilerplate", s)
		}
	}
}

// matchExpandOnly is a kg client without Retrieve: the pipeline then asks match,
// expand and match separately.
type matchExpandOnly struct{ pipeline.Graph }

// TestOneRoundTripToKG: with a kg client that has Retrieve, a search with
// expansion asks kg once, and answers what the three separate calls give.
func TestOneRoundTripToKG(t *testing.T) {
	one := searchtest.New(t, searchtest.Options{})
	three := searchtest.New(t, searchtest.Options{Graph: func(kg pipeline.Graph) pipeline.Graph { return matchExpandOnly{kg} }})
	for _, e := range []*searchtest.Env{one, three} {
		e.Add(t, corpus()...)
		pg, redis := e.Finder.Query("postgresql"), e.Finder.Query("redis")
		if len(pg) != 1 || len(redis) != 1 {
			t.Fatalf("finder: postgresql → %+v, redis → %+v; want one entity each", pg, redis)
		}
		e.KG.AddRelation(pg[0].ID, "ALTERNATIVE_TO", redis[0].ID, 0.8)
	}
	usedSome := false
	for _, q := range []string{"PostgreSQL streaming replication standby", "postgresql", "Redis persistence", "Kubernetes pods"} {
		req := pipeline.Request{Query: q, Expand: true, Explain: true, K: 10}
		n1, n3 := one.KG.Requests(), three.KG.Requests()
		got, want := search(t, one, req), search(t, three, req)
		n1, n3 = one.KG.Requests()-n1, three.KG.Requests()-n3
		// Retrieve replaces match, expand and (when related entities are used)
		// their match; other kg calls (feedback) are the same either way.
		saved := int64(1)
		if got.Exploration.ExpandedEntityCount > 0 {
			saved, usedSome = 2, true
		}
		if len(got.Query.Entities) > 0 && n3-n1 != saved {
			t.Errorf("%q: %d kg requests with Retrieve, %d without; want %d fewer", q, n1, n3, saved)
		}
		ignore := cmp.Options{cmpopts.IgnoreFields(pipeline.Response{}, "TotalTimeMS", "PhaseMS", "Tokens"), // timings (and their digits in the token counts)
			cmpopts.IgnoreFields(pipeline.RetrieverInfo{}, "TookMS")}
		if d := cmp.Diff(want, got, ignore, cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%q: response (-three calls +one call):\n%s", q, d)
		}
	}
	if !usedSome {
		t.Errorf("no query used a related entity: the expansion's match went untested")
	}
}

// TestCopiesOfOnePageShowOnce: a site that serves one page at two URLs (mdBook's
// index.html repeats the first chapter, git-doc's index.html is git.html) stores two
// documents with the same content hash; a search shows the page once, and the
// result slot goes to the next page.
func TestCopiesOfOnePageShowOnce(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	page := func(url, hash string) searchtest.Doc {
		return searchtest.Doc{URL: url, Title: "Getting started", ContentHash: hash, Chunks: []searchtest.Chunk{
			{Heading: "Installation", Text: "Install the toolchain with rustup, then check the compiler version with rustc --version."}}}
	}
	e.Add(t, append(corpus(), page("https://book.example.org/index.html", "h1"),
		page("https://book.example.org/ch01-01-installation.html", "h1"),
		page("https://book.example.org/appendix-install.html", "h2"))...)
	resp := search(t, e, pipeline.Request{Query: "install the toolchain with rustup", Expand: true})
	var book []string
	for _, u := range urls(resp) {
		if strings.HasPrefix(u, "https://book.example.org/") {
			book = append(book, u)
		}
	}
	// The two copies tie on every signal; one of them stands for both.
	if len(book) != 2 || !slices.Contains(book, "https://book.example.org/appendix-install.html") {
		t.Errorf("book pages in the results: %v; want one of the two copies and appendix-install.html", book)
	}
}

// scoreIn searches with explain on and returns the score of the result at url and
// the explain notes; the test fails when url is not among the results.
func scoreIn(t *testing.T, e *searchtest.Env, req pipeline.Request, url string) (float64, []string) {
	t.Helper()
	req.Explain = true
	resp := search(t, e, req)
	for _, r := range resp.Results {
		if r.URL == url {
			return r.Score, resp.Explain.Notes
		}
	}
	t.Fatalf("%q (%+v): %s not in the results %v", req.Query, req, url, urls(resp))
	return 0, nil
}

// hasNote reports whether one of the explain notes contains part.
func hasNote(notes []string, part string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, part) })
}

// A release-notes page ranks at 0.7 of its score unless the request keeps version
// history or the query asks about versions; explain says which applied.
func TestVersionHistoryRanksLower(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	notes := "https://docs.example.org/whatsnew/2.0.html"
	e.Add(t, append(corpus(), searchtest.Doc{URL: notes, Title: "What's New in 2.0",
		Chunks: []searchtest.Chunk{{Heading: "Replication", Text: "Streaming replication now ships WAL records to standby servers; the standby replays WAL from the primary."}}})...)
	score := func(req pipeline.Request) (float64, []string) { return scoreIn(t, e, req, notes) }
	q := "standby replays wal from the primary"
	kept, keptNotes := score(pipeline.Request{Query: q, KeepHistory: true})
	demoted, notesDemoted := score(pipeline.Request{Query: q})
	if math.Abs(demoted-0.7*kept) > 1e-3 {
		t.Errorf("score %.4f by default, %.4f with history kept: want 0.7 × the kept score", demoted, kept)
	}
	if !hasNote(notesDemoted, "rank lower") || hasNote(keptNotes, "rank lower") {
		t.Errorf("explain notes: demoted %q, kept %q", notesDemoted, keptNotes)
	}
	// A query about versions keeps the page's full score.
	q = "what's new: standby replays wal from the primary"
	kept, _ = score(pipeline.Request{Query: q, KeepHistory: true})
	asked, askedNotes := score(pipeline.Request{Query: q})
	if math.Abs(asked-kept) > 1e-9 || !hasNote(askedNotes, "asks about versions") {
		t.Errorf("query about versions: score %.4f, kept %.4f, notes %q", asked, kept, askedNotes)
	}
}

// A source listing and a generated index rank at 0.7 of their score unless the
// request keeps generated pages; a query asking for source code keeps the listing's
// full score but not the index's; explain says which applied.
func TestGeneratedPagesRankLower(t *testing.T) {
	e := searchtest.New(t, searchtest.Options{})
	listing := "https://docs.example.org/_modules/replica/standby.html"
	index := "https://docs.example.org/genindex.html"
	e.Add(t, append(corpus(),
		searchtest.Doc{URL: listing, Title: "replica.standby — Example 2.0 documentation",
			Chunks: []searchtest.Chunk{{Heading: "Source code for replica.standby", Text: "def replay(wal): # the standby replays WAL records streamed from the primary\n    for record in wal: apply(record)"}}},
		searchtest.Doc{URL: index, Title: "Index — Example 2.0 documentation",
			Chunks: []searchtest.Chunk{{Heading: "R", Text: "replay() (replica.standby function) · replica.standby (module) · standby server · streaming replication · WAL replay"}}})...)
	score := func(req pipeline.Request, url string) (float64, []string) { return scoreIn(t, e, req, url) }
	q := "standby replays wal records from the primary"
	for _, u := range []string{listing, index} {
		kept, keptNotes := score(pipeline.Request{Query: q, KeepGenerated: true}, u)
		demoted, notes := score(pipeline.Request{Query: q}, u)
		if math.Abs(demoted-ranker.DefaultGeneratedFactor*kept) > 1e-3 {
			t.Errorf("%s: score %.4f by default, %.4f with generated pages kept: want %g × the kept score", u, demoted, kept, ranker.DefaultGeneratedFactor)
		}
		if !hasNote(notes, "rank lower") || hasNote(keptNotes, "rank lower") {
			t.Errorf("%s: explain notes: demoted %q, kept %q", u, notes, keptNotes)
		}
	}
	// A query asking for source code keeps the listing's full score, not the index's.
	q = "source code of the standby that replays wal records"
	kept, _ := score(pipeline.Request{Query: q, KeepGenerated: true}, listing)
	asked, notes := score(pipeline.Request{Query: q}, listing)
	if math.Abs(asked-kept) > 1e-9 || !hasNote(notes, "asks for source code") {
		t.Errorf("query for source code: listing score %.4f, kept %.4f, notes %q", asked, kept, notes)
	}
	kept, _ = score(pipeline.Request{Query: q, KeepGenerated: true}, index)
	asked, _ = score(pipeline.Request{Query: q}, index)
	if math.Abs(asked-ranker.DefaultGeneratedFactor*kept) > 1e-3 {
		t.Errorf("query for source code: index score %.4f, want %g × %.4f", asked, ranker.DefaultGeneratedFactor, kept)
	}
}
