package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/kg/internal/config"
	"github.com/kgsearch/kgsearch/services/kg/internal/corpus"
)

// service is a kg service running behind an httptest server.
type service struct {
	parts  *Parts
	ts     *httptest.Server
	client *kgapi.Client
	cancel context.CancelFunc
}

func testConfig(t testing.TB, uri, user, password string) config.Config {
	cfg := config.Default(t.TempDir())
	cfg.Neo4jURI, cfg.Neo4jUser, cfg.Neo4jPassword = uri, user, password
	cfg.GazetteerEvery = 0
	// The shared test Neo4j holds every other test's graph and the evaluation
	// corpus: loading it all into a projection per test takes minutes under
	// -race. TestProjectionFollowsWrites runs the service with it.
	cfg.Projection = false
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// start builds the service from cfg and runs its background work; wantReady
// waits until /readyz answers 200.
func start(t testing.TB, cfg config.Config, wantReady bool) *service {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	p, err := Build(cfg, logger)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Background(ctx) }()
	ts := httptest.NewServer(p.Server.Engine())
	s := &service{parts: p, ts: ts, client: kgapi.NewClient(ts.URL, nil, ""), cancel: cancel}
	t.Cleanup(func() {
		cancel()
		<-done
		ts.Close()
		_ = p.Store.Close(context.Background())
	})
	if wantReady {
		// Start-up loads the projection and the entity profiles of whatever the shared
		// test graph holds before it reports ready; under -race on a busy machine that
		// took over a minute. This bounds a hang, it does not time the start-up.
		deadline := time.Now().Add(4 * time.Minute)
		for {
			if err := s.client.Ready(context.Background()); err == nil {
				break
			} else if time.Now().After(deadline) {
				t.Fatalf("service not ready after 4 minutes: %v", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return s
}

// neo4jDriver opens a driver on the test server, closed when the test ends: the
// tests read what kg wrote straight from Neo4j.
func neo4jDriver(t testing.TB, uri, user, password string) neo4j.DriverWithContext {
	t.Helper()
	drv, err := neo4j.NewDriverWithContext(uri, neo4j.BasicAuth(user, password, ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Close(context.Background()) })
	return drv
}

// nodeCounts counts, straight from Neo4j, the nodes a test created.
func nodeCounts(t *testing.T, uri, user, password, prefix string, entityIDs []string) (docs, chunks, entities int64) {
	t.Helper()
	ctx := context.Background()
	drv := neo4jDriver(t, uri, user, password)
	res, err := neo4j.ExecuteQuery(ctx, drv, `
		CALL () { MATCH (d:Document) WHERE d.id STARTS WITH $p RETURN count(d) AS docs }
		CALL () { MATCH (c:Chunk) WHERE c.id STARTS WITH $p RETURN count(c) AS chunks }
		CALL () { MATCH (e:Entity) WHERE e.id IN $ids RETURN count(e) AS entities }
		RETURN docs, chunks, entities`, map[string]any{"p": prefix, "ids": entityIDs}, neo4j.EagerResultTransformer)
	if err != nil {
		t.Fatalf("count nodes: %v", err)
	}
	r := res.Records[0]
	d, _ := r.Get("docs")
	c, _ := r.Get("chunks")
	e, _ := r.Get("entities")
	return d.(int64), c.(int64), e.(int64)
}

func randomWord(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	return string(b)
}

func chunkIDs(cs []kgapi.ChunkMatch) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ChunkID)
	}
	return out
}

func hasPrefix(ids []string, prefix string) []string {
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// matchLimit is the most chunks one match answers (kg's cap).
const matchLimit = 1000

// TestLifecycle drives ingest → match → expand → re-ingest → delete through the
// HTTP API against the real Neo4j.
func TestLifecycle(t *testing.T) {
	uri, user, password := testenv.Neo4j(t)
	cfg := testConfig(t, uri, user, password)
	s := start(t, cfg, true)
	ctx := context.Background()

	word := randomWord(10)
	prefix := "kgtest-" + word + "-"
	probe := "zq_probe_" + word // an identifier only this test mentions
	name := "Zarq" + word + " Engine"
	nameID := "zarq" + word + "-engine"
	docA, docB := prefix+"a", prefix+"b"
	urlA := "https://kgtest.example/" + word + "/a"
	t.Cleanup(func() {
		_ = s.client.DeleteDocument(ctx, docB)
		_ = s.client.DeleteDocument(ctx, docA)
	})

	v1 := kgapi.Document{ID: docA, URL: urlA, Title: name + " internals", Headings: []string{name + " internals"},
		Chunks: []kgapi.Chunk{
			{ID: docA + "-0", Ordinal: 0, Text: fmt.Sprintf("The %s uses PostgreSQL for storage. The `%s` function depends on Redis. Django supports PostgreSQL.", name, probe)},
			{ID: docA + "-1", Ordinal: 1, Text: fmt.Sprintf("PostgreSQL uses a Write-Ahead Log (WAL). The %s is written in Go. Call `%s` before every commit.", name, probe)},
			{ID: docA + "-2", Ordinal: 2, Text: "Django is written in Python and supports PostgreSQL and SQLite."},
		}}
	got, err := s.client.Ingest(ctx, v1)
	if err != nil {
		t.Fatalf("ingest v1: %v", err)
	}
	if got.DocumentID != docA || got.Chunks != 3 || got.Entities < 5 || got.Mentions < 8 || got.Relations < 4 {
		t.Fatalf("ingest v1: got %+v, want 3 chunks, at least 5 entities, 8 mentions, 4 relations", got)
	}
	b := kgapi.Document{ID: docB, URL: "https://kgtest.example/" + word + "/b", Title: "Tuning the " + name,
		Headings: []string{"Tuning the " + name},
		Chunks:   []kgapi.Chunk{{ID: docB + "-0", Ordinal: 0, Text: fmt.Sprintf("Tune the %s: PostgreSQL needs a larger shared_buffers setting.", name)}},
		Links:    []kgapi.Link{{URL: urlA, Anchor: name, DocumentID: docA}}}
	if _, err := s.client.Ingest(ctx, b); err != nil {
		t.Fatalf("ingest b: %v", err)
	}

	t.Run("match", func(t *testing.T) {
		m, err := s.client.Match(ctx, kgapi.MatchRequest{Entities: []string{probe, "Postgres", "nosuch" + word}, Limit: matchLimit})
		if err != nil {
			t.Fatal(err)
		}
		if diff := slices.Compare([]string{"nosuch" + word}, m.Unknown); diff != 0 {
			t.Errorf("unknown: got %v, want [nosuch%s]", m.Unknown, word)
		}
		var ids []string
		for _, r := range m.Resolved {
			ids = append(ids, r.ID)
		}
		if !slices.Equal(ids, []string{probe, "postgresql"}) {
			t.Errorf("resolved: got %v, want [%s postgresql]", ids, probe)
		}
		if len(m.Chunks) == 0 || !strings.HasPrefix(m.Chunks[0].ChunkID, docA) {
			t.Fatalf("best chunk: got %v, want one of %s (the only chunks with the rare probe)", chunkIDs(m.Chunks), docA)
		}
		// The probe's two chunks mention both entities and rank above the rest.
		top := hasPrefix(chunkIDs(m.Chunks[:2]), prefix)
		if !slices.Equal(top, []string{docA + "-0", docA + "-1"}) {
			t.Errorf("top two: got %v, want %s-0 and -1", chunkIDs(m.Chunks[:2]), docA)
		}
		// Every chunk mentioning PostgreSQL, unless the graph holds more than the limit
		// (a shared development graph with a crawled PostgreSQL manual): then only the
		// top two are this test's to check.
		if all := hasPrefix(chunkIDs(m.Chunks), prefix); len(m.Chunks) < matchLimit && !slices.Equal(all, []string{docA + "-0", docA + "-1", docA + "-2", docB + "-0"}) {
			t.Errorf("our chunks: got %v, want the 4 chunks mentioning PostgreSQL", all)
		}
		for _, c := range m.Chunks {
			if c.Score <= 0 || c.Score > 1 {
				t.Errorf("chunk %s: score %v outside (0,1]", c.ChunkID, c.Score)
			}
		}
	})

	t.Run("expand", func(t *testing.T) {
		e, err := s.client.Expand(ctx, kgapi.ExpandRequest{Entities: []string{probe, "nosuch" + word}, MaxHops: 2, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(e.Unknown, []string{"nosuch" + word}) {
			t.Errorf("unknown: got %v", e.Unknown)
		}
		if want := []kgapi.EntityRef{{ID: probe, Name: probe, Type: "identifier"}}; !slices.Equal(e.Resolved, want) {
			t.Errorf("resolved: got %+v, want %+v", e.Resolved, want)
		}
		byID := map[string]kgapi.RelatedEntity{}
		for _, r := range e.Related {
			byID[r.ID] = r
		}
		redis, ok := byID["redis"]
		if !ok {
			t.Fatalf("related: got %v, want redis (\"%s depends on Redis\")", e.Related, probe)
		}
		wantStep := kgapi.PathStep{From: probe, Relation: "DEPENDS_ON", To: "redis"}
		if redis.Hops != 1 || len(redis.Path) != 1 || redis.Path[0].From != wantStep.From || redis.Path[0].Relation != wantStep.Relation || redis.Path[0].To != wantStep.To {
			t.Errorf("redis: got hops %d path %+v, want one step %+v", redis.Hops, redis.Path, wantStep)
		}
		if !slices.Contains(redis.Evidence, docA+"-0") {
			t.Errorf("redis evidence: got %v, want %s-0", redis.Evidence, docA)
		}
		two := 0
		for _, r := range e.Related {
			if r.Hops == 2 {
				two++
				if len(r.Path) != 2 || r.Path[0].From != probe && r.Path[0].To != probe {
					t.Errorf("two-hop %s: path %+v does not start at the query entity", r.ID, r.Path)
				}
			}
			if r.Confidence <= 0 || r.Confidence > 1 {
				t.Errorf("%s: confidence %v outside (0,1]", r.ID, r.Confidence)
			}
		}
		if two == 0 {
			t.Errorf("max_hops 2: got no two-hop entities, want some (through PostgreSQL or Redis)")
		}
		only, err := s.client.Expand(ctx, kgapi.ExpandRequest{Entities: []string{probe}, RelationTypes: []string{"CO_OCCURS"}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range only.Related {
			if r.Path[0].Relation != "CO_OCCURS" {
				t.Errorf("relation_types [CO_OCCURS]: got a %s step", r.Path[0].Relation)
			}
		}
	})

	t.Run("entity", func(t *testing.T) {
		ent := getEntity(t, s, probe)
		if ent.Mentions != 2 || ent.Documents != 1 {
			t.Errorf("%s: got %d mentions in %d documents, want 2 in 1", probe, ent.Mentions, ent.Documents)
		}
	})

	t.Run("re-ingest replaces", func(t *testing.T) {
		v2 := v1
		v2.Chunks = []kgapi.Chunk{
			{ID: docA + "-0", Ordinal: 0, Text: fmt.Sprintf("The %s uses PostgreSQL for storage. The `%s` function depends on Memcached.", name, probe)},
			{ID: docA + "-1", Ordinal: 1, Text: fmt.Sprintf("PostgreSQL uses a Write-Ahead Log (WAL). Call `%s` before every commit.", probe)},
		}
		for range 2 { // twice: idempotent
			if _, err := s.client.Ingest(ctx, v2); err != nil {
				t.Fatalf("ingest v2: %v", err)
			}
		}
		if ent := getEntity(t, s, probe); ent.Mentions != 2 || ent.Documents != 1 {
			t.Errorf("%s after re-ingest: got %d mentions in %d documents, want 2 in 1 (replaced, not added)", probe, ent.Mentions, ent.Documents)
		}
		m, err := s.client.Match(ctx, kgapi.MatchRequest{Entities: []string{"postgresql"}, Limit: matchLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Chunks) == matchLimit {
			// A shared graph holds more PostgreSQL chunks than one answer: match the
			// probe, which the replaced chunks mention and chunk 2 never did.
			if m, err = s.client.Match(ctx, kgapi.MatchRequest{Entities: []string{probe}, Limit: matchLimit}); err != nil {
				t.Fatal(err)
			}
			if all := hasPrefix(chunkIDs(m.Chunks), prefix); !slices.Equal(all, []string{docA + "-0", docA + "-1"}) {
				t.Errorf("chunks mentioning %s: got %v, want %s-0 and -1", probe, all, docA)
			}
		} else if all := hasPrefix(chunkIDs(m.Chunks), prefix); !slices.Equal(all, []string{docA + "-0", docA + "-1", docB + "-0"}) {
			t.Errorf("chunks mentioning PostgreSQL: got %v, want %s-0, -1 and %s-0 (chunk 2 is gone)", all, docA, docB)
		}
		e, err := s.client.Expand(ctx, kgapi.ExpandRequest{Entities: []string{probe}, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var rel []string
		for _, r := range e.Related {
			rel = append(rel, r.ID)
		}
		if slices.Contains(rel, "redis") || !slices.Contains(rel, "memcached") {
			t.Errorf("related after re-ingest: got %v, want memcached and not redis", rel)
		}
		_, chunks, _ := nodeCounts(t, uri, user, password, prefix, nil)
		if chunks != 3 {
			t.Errorf("chunk nodes: got %d, want 3", chunks)
		}
	})

	t.Run("learned term in queries", func(t *testing.T) {
		p, err := s.client.Parse(ctx, "tuning "+strings.ToLower(name)+" with postgres")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range p.Entities {
			ids = append(ids, e.ID)
		}
		if !slices.Contains(ids, nameID) || !slices.Contains(ids, "postgresql") {
			t.Errorf("parse: got %v, want %s (learned from two documents' headings) and postgresql", ids, nameID)
		}
	})

	t.Run("stats", func(t *testing.T) {
		var st kgapi.Stats
		getJSON(t, s, "/api/v1/stats", &st)
		if st.Documents < 2 || st.Chunks < 3 || st.Entities < 5 || st.LearnerDocuments != 2 {
			t.Errorf("stats: got %+v, want at least 2 documents, 3 chunks, 5 entities and 2 learner documents", st)
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := s.client.DeleteDocument(ctx, docA); err != nil {
			t.Fatalf("delete a: %v", err)
		}
		// b links to a: a stays as a placeholder without chunks.
		docs, chunks, ents := nodeCounts(t, uri, user, password, prefix, []string{probe})
		if docs != 2 || chunks != 1 || ents != 0 {
			t.Errorf("after deleting a: got %d documents, %d chunks, %d probe entities; want 2 (b and a's placeholder), 1, 0", docs, chunks, ents)
		}
		status, _ := rawCall(t, s, http.MethodGet, "/api/v1/entities/"+probe)
		if status != http.StatusNotFound {
			t.Errorf("GET deleted entity: got %d, want 404", status)
		}
		if status, _ := rawCall(t, s, http.MethodDelete, "/api/v1/documents/"+docA); status != http.StatusNotFound {
			t.Errorf("second delete: got %d, want 404", status)
		}
		if err := s.client.DeleteDocument(ctx, docB); err != nil {
			t.Fatalf("delete b: %v", err)
		}
		docs, chunks, ents = nodeCounts(t, uri, user, password, prefix, []string{probe, nameID})
		if docs != 0 || chunks != 0 || ents != 0 {
			t.Errorf("after deleting both: got %d documents, %d chunks, %d entities; want nothing left", docs, chunks, ents)
		}
	})
}

// TestLearnerSurvivesRestart saves the learner at shutdown and loads it in a new
// process: a term learned from two documents is still found in queries.
func TestLearnerSurvivesRestart(t *testing.T) {
	uri, user, password := testenv.Neo4j(t)
	cfg := testConfig(t, uri, user, password)
	cfg.LearnerFile = filepath.Join(t.TempDir(), "kg", "learner.json")
	word := randomWord(10)
	name := "Vorp" + word + " Cache"
	id := "vorp" + word + "-cache"
	prefix := "kgtest-" + word + "-"
	ctx := context.Background()

	s1 := start(t, cfg, true)
	for i := range 2 {
		doc := kgapi.Document{ID: fmt.Sprintf("%s%d", prefix, i), Title: name + " guide", Headings: []string{name + " guide"},
			Chunks: []kgapi.Chunk{{ID: fmt.Sprintf("%s%d-0", prefix, i), Text: "The " + name + " keeps hot rows in memory and uses Redis."}}}
		if _, err := s1.client.Ingest(ctx, doc); err != nil {
			t.Fatalf("ingest: %v", err)
		}
		t.Cleanup(func() { _ = s1.client.DeleteDocument(ctx, doc.ID) })
	}
	if err := corpus.SaveLearner(cfg.LearnerFile, s1.parts.Learner); err != nil {
		t.Fatal(err)
	}

	s2 := start(t, cfg, false)
	p, err := s2.client.Parse(ctx, strings.ToLower(name)+" eviction")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entities) == 0 || p.Entities[0].ID != id {
		t.Errorf("parse after restart: got %+v, want %s first", p.Entities, id)
	}

	// Without the file, the graph's live gazetteer still knows the entity.
	cfg.LearnerFile = ""
	s3 := start(t, cfg, true)
	bare, err := extract.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range bare.Query(strings.ToLower(name) + " eviction") {
		if e.ID == id {
			t.Fatalf("control: an extractor that never saw the corpus finds %s; the checks below would prove nothing", id)
		}
	}
	if s3.parts.Learner.Documents() != 0 {
		t.Fatalf("learner without a file: got %d documents, want a fresh one", s3.parts.Learner.Documents())
	}
	// Background refreshed the live gazetteer when the graph became ready; a second
	// refresh finds nothing new.
	n, err := corpus.RefreshGazetteer(ctx, s3.parts.Store, s3.parts.Extractor, 1000, 2)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	top, err := s3.parts.Store.EntitiesByPrefix(ctx, "", "", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(top, func(e graph.EntityStats) bool { return e.ID == id }) {
		t.Logf("%s is not among the 1,000 most frequent entities of this (shared) graph: the live gazetteer check does not apply", id)
		return
	}
	p, err = s3.client.Parse(ctx, strings.ToLower(name)+" eviction")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Entities) == 0 || p.Entities[0].ID != id {
		t.Errorf("parse from the graph's live gazetteer: got %+v, want %s first", p.Entities, id)
	}
	if n != 0 {
		t.Errorf("second refresh: got %d new entries, want 0", n)
	}
}

// TestNeo4jDown points a service at a closed port: /readyz fails, graph
// endpoints answer 503 with a reason, parsing still works.
func TestNeo4jDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(t, "bolt://"+addr, "neo4j", "nopassword")
	cfg.Neo4jRetry, cfg.GraphTimeout = 500*time.Millisecond, 2*time.Second
	s := start(t, cfg, false)
	ctx := context.Background()

	status, body := rawCall(t, s, http.MethodGet, "/readyz")
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "neo4j") {
		t.Errorf("/readyz: got %d %s, want 503 naming neo4j", status, body)
	}
	_, err = s.client.Ingest(ctx, kgapi.Document{ID: "kgtest-down", Chunks: []kgapi.Chunk{{ID: "kgtest-down-0", Text: "Django is written in Python."}}})
	if !errors.Is(err, kgapi.ErrUnavailable) || !strings.Contains(err.Error(), "Neo4j") {
		t.Errorf("ingest while starting: got %v, want ErrUnavailable naming Neo4j", err)
	}
	// Past start-up (the schema existed), a lost connection is a 503 too.
	s.parts.Graph.SetReady(true)
	for _, call := range []func() error{
		func() error {
			_, err := s.client.Ingest(ctx, kgapi.Document{ID: "kgtest-down", Chunks: []kgapi.Chunk{{ID: "kgtest-down-0", Text: "Django is written in Python."}}})
			return err
		},
		func() error {
			_, err := s.client.Match(ctx, kgapi.MatchRequest{Entities: []string{"python"}})
			return err
		},
		func() error {
			_, err := s.client.Expand(ctx, kgapi.ExpandRequest{Entities: []string{"python"}})
			return err
		},
		func() error { _, err := s.client.Entities(ctx, "py", "", 5); return err },
	} {
		if err := call(); !errors.Is(err, kgapi.ErrUnavailable) || !strings.Contains(err.Error(), "Neo4j") {
			t.Errorf("got %v, want ErrUnavailable naming Neo4j", err)
		}
	}
	if status, body := rawCall(t, s, http.MethodGet, "/api/v1/stats"); status != http.StatusServiceUnavailable || !strings.Contains(body, "Retry") && !strings.Contains(body, "retry") {
		t.Errorf("stats: got %d %s, want 503 saying to retry", status, body)
	}
	if _, err := s.client.Parse(ctx, "django on python"); err != nil {
		t.Errorf("parse needs no graph: %v", err)
	}
}

func getEntity(t *testing.T, s *service, id string) kgapi.Entity {
	t.Helper()
	var e kgapi.Entity
	getJSON(t, s, "/api/v1/entities/"+id, &e)
	return e
}

func getJSON(t *testing.T, s *service, path string, out any) {
	t.Helper()
	status, body := rawCall(t, s, http.MethodGet, path)
	if status != http.StatusOK {
		t.Fatalf("GET %s: got %d %s, want 200", path, status, body)
	}
	if err := jsonUnmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

func rawCall(t *testing.T, s *service, method, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func jsonUnmarshal(s string, out any) error { return json.Unmarshal([]byte(s), out) }

// TestProjectionFollowsWrites runs the service with the graph projection: once it
// is loaded, match answers from memory, and the service's own ingest and delete
// are visible to its next query.
func TestProjectionFollowsWrites(t *testing.T) {
	uri, user, password := testenv.Neo4j(t)
	cfg := testConfig(t, uri, user, password)
	cfg.Projection, cfg.ProjectionReadyWait = true, 0
	s := start(t, cfg, true)
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Minute)
	for !s.parts.Follower.P.Loaded() {
		if time.Now().After(deadline) {
			t.Fatal("projection not loaded after 10 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	word := randomWord(10)
	probe := "zq_proj_" + word
	doc := "kgtest-proj-" + word
	t.Cleanup(func() { _ = s.client.DeleteDocument(ctx, doc) })
	if _, err := s.client.Ingest(ctx, kgapi.Document{ID: doc, URL: "https://kgtest.example/" + word, Chunks: []kgapi.Chunk{
		{ID: doc + "-0", Ordinal: 0, Text: fmt.Sprintf("Call `%s` before every commit to PostgreSQL.", probe)},
	}}); err != nil {
		t.Fatalf("ingest: %v", err)
	}
	seq := s.parts.Follower.P.Seq()
	m, err := s.client.Match(ctx, kgapi.MatchRequest{Entities: []string{probe}})
	if err != nil {
		t.Fatalf("match: %v", err)
	}
	if len(m.Chunks) != 1 || m.Chunks[0].ChunkID != doc+"-0" {
		t.Fatalf("match right after the ingest: got %v, want [%s-0] (own write visible)", chunkIDs(m.Chunks), doc)
	}
	// The answer came from the projection: it holds the chunk at this position.
	pm, err := s.parts.Follower.P.MatchEntities(ctx, []string{probe}, 10)
	if err != nil || len(pm.Chunks) != 1 || seq == 0 {
		t.Fatalf("projection match: %+v, %v (seq %d)", pm.Chunks, err, seq)
	}
	if err := s.client.DeleteDocument(ctx, doc); err != nil {
		t.Fatalf("delete: %v", err)
	}
	m, err = s.client.Match(ctx, kgapi.MatchRequest{Entities: []string{probe}})
	if err != nil {
		t.Fatalf("match after delete: %v", err)
	}
	if len(m.Chunks) != 0 || len(m.Unknown) != 1 {
		t.Errorf("match right after the delete: got %v, unknown %v; want nothing and the probe unknown", chunkIDs(m.Chunks), m.Unknown)
	}
}
