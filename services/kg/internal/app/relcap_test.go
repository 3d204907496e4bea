package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// TestRelationsCapped: a document whose extraction gives more relations than
// KG_MAX_RELATIONS is stored with the strongest ones — the typed relations the
// patterns found before co-occurrences — instead of a write too large for Neo4j's
// transaction memory and the graph timeout (an index page with hundreds of
// thousands of co-occurrences never reached the graph: every delivery failed).
func TestRelationsCapped(t *testing.T) {
	uri, user, password := testenv.Neo4j(t)
	ctx := context.Background()
	word := randomWord(10)
	id := "kgtest-" + word + "-relcap"
	name := "Zarq" + word + " Engine"
	doc := kgapi.Document{ID: id, URL: "https://kgtest.example/" + word + "/relcap", Title: name,
		Chunks: []kgapi.Chunk{
			{ID: id + "-0", Ordinal: 0, Text: fmt.Sprintf("The %s uses PostgreSQL for storage and depends on Redis. Django supports PostgreSQL.", name)},
			{ID: id + "-1", Ordinal: 1, Text: fmt.Sprintf("PostgreSQL uses a Write-Ahead Log (WAL). The %s is written in Go and uses Redis.", name)},
			{ID: id + "-2", Ordinal: 2, Text: "Django is written in Python and supports PostgreSQL and SQLite."},
		}}

	uncapped := start(t, testConfig(t, uri, user, password), true)
	t.Cleanup(func() { _ = uncapped.client.DeleteDocument(ctx, id) })
	all, err := uncapped.client.Ingest(ctx, doc)
	if err != nil {
		t.Fatalf("ingest without a cap: %v", err)
	}
	if all.Relations < 4 {
		t.Fatalf("the document gives %d relations; the test needs at least 4", all.Relations)
	}
	if n, _ := relationCounts(t, uri, user, password, id); n != int64(all.Relations) {
		t.Fatalf("RELATED edges without a cap: got %d, want %d", n, all.Relations)
	}
	_, allCo := relationCounts(t, uri, user, password, id)
	allTyped := int64(all.Relations) - allCo

	cfg := testConfig(t, uri, user, password)
	cfg.MaxRelations = all.Relations / 2
	capped := start(t, cfg, true)
	got, err := capped.client.Ingest(ctx, doc)
	if err != nil {
		t.Fatalf("ingest with KG_MAX_RELATIONS=%d: %v", cfg.MaxRelations, err)
	}
	if got.Relations != cfg.MaxRelations {
		t.Errorf("relations written: got %d, want the cap %d (of %d)", got.Relations, cfg.MaxRelations, all.Relations)
	}
	n, co := relationCounts(t, uri, user, password, id)
	if n != int64(cfg.MaxRelations) {
		t.Errorf("RELATED edges of the document in Neo4j: got %d, want %d", n, cfg.MaxRelations)
	}
	// The typed relations go first: co-occurrences are kept only when every typed
	// relation was.
	if typed := n - co; co > 0 && typed < allTyped {
		t.Errorf("kept %d co-occurrences but only %d of the %d typed relations", co, typed, allTyped)
	}
	if allTyped >= n && co > 0 {
		t.Errorf("kept %d co-occurrences although the %d typed relations fill the cap", co, allTyped)
	}
}

// relationCounts counts the document's RELATED edges in Neo4j, and among them the
// co-occurrences.
func relationCounts(t *testing.T, uri, user, password, doc string) (n, cooccur int64) {
	t.Helper()
	ctx := context.Background()
	drv := neo4jDriver(t, uri, user, password)
	res, err := neo4j.ExecuteQuery(ctx, drv, `
		MATCH ()-[r:RELATED]->() WHERE r.doc = $id
		RETURN count(r) AS n, sum(CASE WHEN r.source = $co THEN 1 ELSE 0 END) AS co`,
		map[string]any{"id": doc, "co": graph.SourceCooccurrence}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := res.Records[0].Get("n")
	b, _ := res.Records[0].Get("co")
	return a.(int64), b.(int64)
}
