// Package searchtest builds a complete search service for tests: a fresh MariaDB
// database on the real test server (testenv.MariaDBDSN), the store opened with the
// hash embedder's model, a Bleve index in t.TempDir() fed by the real indexer, a fake
// kg service (pkg/kgapi/kgapitest) fed through pkg/extract, the pipeline and the HTTP API on an
// httptest server.
package searchtest

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/kgapi/kgapitest"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/admission"
	"github.com/kgsearch/kgsearch/services/search/internal/api"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
	"github.com/kgsearch/kgsearch/services/search/internal/chunkcache"
	"github.com/kgsearch/kgsearch/services/search/internal/config"
	"github.com/kgsearch/kgsearch/services/search/internal/entities"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/tokens"
)

// Dims of the hash embedder used by the harness.
const Dims = 256

// Now is the harness clock (for recency).
var Now = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// Env is a running search service for one test.
type Env struct {
	DSN      string
	Store    *store.Store
	Index    *bm25.Index
	Indexer  *indexer.Indexer
	Chunks   *chunkcache.Cache // hydration's chunk cache
	KG       *kgapitest.Server
	Embedder *embedtest.Hash
	Pipeline *pipeline.Pipeline
	Finder   *entities.Finder
	Server   *httpserver.Server
	HTTP     *httptest.Server // the API

	manualKG bool
}

// Options change the harness.
type Options struct {
	NoKG     bool                                   // no kg service at all
	ManualKG bool                                   // Add does not feed the fake kg service
	DSN      string                                 // use this database instead of a fresh one (kept afterwards)
	IndexDir string                                 // use this Bleve directory instead of one in t.TempDir()
	Dims     int                                    // hash embedder dimensions; default Dims
	Pipeline func(o *pipeline.Options)              // adjust pipeline options
	Graph    func(kg pipeline.Graph) pipeline.Graph // wrap the kg client
	// Admission, when set, puts the API's searches behind admission control.
	Admission *admission.Options
}

// FreshDatabase creates kgsearch_test_<random> on the test server, drops it when the
// test ends, and returns its DSN. It skips (or fails with KGS_INTEGRATION=1) without
// KGS_TEST_MARIADB_DSN.
func FreshDatabase(t testing.TB) string {
	t.Helper()
	return testenv.FreshMariaDB(t)
}

// New builds the environment.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	ctx := context.Background()
	logger := slog.New(slog.DiscardHandler)
	dims := o.Dims
	if dims == 0 {
		dims = Dims
	}
	e := &Env{DSN: o.DSN, Embedder: embedtest.NewHash(dims), manualKG: o.ManualKG}
	if e.DSN == "" {
		e.DSN = FreshDatabase(t)
	}
	m := e.Embedder.Info()
	st, err := store.Open(ctx, store.Config{DSN: e.DSN, Model: store.Model{Name: m.Name, Dims: m.Dims}}, logger)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	e.Store = st
	dir := o.IndexDir
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "bleve")
	}
	ix, err := bm25.Open(dir)
	if err != nil {
		t.Fatalf("open bm25 index: %v", err)
	}
	t.Cleanup(func() { ix.Close() })
	e.Index = ix
	// Hydration reads through a chunk cache following the feed, as in the service.
	e.Chunks = chunkcache.New(st, 1000)
	e.Indexer = indexer.New(st, ix, indexer.Config{Interval: 50 * time.Millisecond, OnChange: e.Chunks.Forget}, logger, nil)
	if e.Finder, err = entities.NewFinder(); err != nil {
		t.Fatal(err)
	}
	var kg pipeline.Graph
	var lister api.EntityLister
	if !o.NoKG {
		e.KG = kgapitest.New(t)
		c := kgapi.NewClient(e.KG.URL, nil, "")
		kg, lister = c, c
		if o.Graph != nil {
			kg = o.Graph(kg)
		}
	}
	rk, err := ranker.New(ranker.Options{PreviewChars: config.Default().PreviewChars, Now: func() time.Time { return Now }})
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tokens.New()
	if err != nil {
		t.Fatal(err)
	}
	po := pipeline.Options{Tokens: tc.Count, Deadline: 5 * time.Second, VectorTimeout: 4 * time.Second,
		GraphTimeout: 2 * time.Second, BM25Timeout: 2 * time.Second, ExpandTimeout: 2 * time.Second}
	if o.Pipeline != nil {
		o.Pipeline(&po)
	}
	e.Pipeline = pipeline.New(queryparse.New(e.Finder), e.Embedder, chunkcache.Wrap(st, e.Chunks), kg, ix, e.Indexer, rk, po, logger, nil)
	e.Server = httpserver.New("search", httpserver.Config{Addr: "127.0.0.1:0"}, logger)
	var searcher api.Searcher = e.Pipeline
	if o.Admission != nil {
		searcher = admission.Limited{Next: e.Pipeline, L: admission.New(*o.Admission, nil)}
	}
	a := api.New(e.Server, api.Deps{Search: searcher, Index: e.Indexer, KG: lister,
		Reindex: api.ReindexFunc(func(ctx context.Context) error {
			err := ix.Rebuild(ctx, indexer.Fill(st, logger))
			e.Chunks.Clear()
			return err
		})})
	a.Register()
	e.HTTP = httptest.NewServer(e.Server.Engine())
	t.Cleanup(e.HTTP.Close)
	return e
}

// Doc is a test document.
type Doc struct {
	URL         string
	Title       string
	Tags        []string
	Published   time.Time
	ContentHash string // as the crawler sets it; equal hashes are copies of one page
	Chunks      []Chunk
}

// Chunk is a test chunk.
type Chunk struct {
	Heading string
	Text    string
}

// Add stores the documents (embedding their chunks with the hash embedder), gives
// them to the fake kg service and syncs the index.
func (e *Env) Add(t testing.TB, docs ...Doc) {
	t.Helper()
	ctx := context.Background()
	for _, d := range docs {
		doc := store.Document{URL: d.URL, Title: d.Title, Tags: d.Tags, PublishedAt: d.Published, FetchedAt: Now,
			ContentHash: d.ContentHash}
		texts := make([]string, len(d.Chunks))
		for i, c := range d.Chunks {
			texts[i] = d.Title + "\n" + c.Heading + "\n" + c.Text
		}
		vecs, err := e.Embedder.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		chunks := make([]store.Chunk, len(d.Chunks))
		off := 0
		for i, c := range d.Chunks {
			var hp []string
			if c.Heading != "" {
				hp = []string{c.Heading}
				doc.Headings = append(doc.Headings, c.Heading)
			}
			chunks[i] = store.Chunk{Text: c.Text, TokenCount: len(strings.Fields(c.Text)), StartOffset: off,
				EndOffset: off + len(c.Text), HeadingPath: hp, Embedding: vecs[i]}
			off += len(c.Text) + 1
		}
		if _, err := e.Store.UpsertDocument(ctx, &doc, chunks, nil); err != nil {
			t.Fatalf("upsert %s: %v", d.URL, err)
		}
		if e.KG != nil && !e.manualKG {
			kc := make([]kgapitest.Chunk, len(chunks))
			for i, c := range chunks {
				kc[i] = kgapitest.Chunk{ID: strconv.FormatInt(c.ID, 10), Text: c.Text}
			}
			e.KG.AddDocument(doc.ID, doc.Title, kc)
		}
	}
	e.Sync(t)
}

// Sync applies the change feed to the index (and the indexer's document table).
func (e *Env) Sync(t testing.TB) {
	t.Helper()
	if _, err := e.Indexer.Sync(context.Background()); err != nil {
		t.Fatalf("sync index: %v", err)
	}
}
