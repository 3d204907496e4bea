// Package indexer keeps the search service's BM25 index (package bm25) in step with
// the store: it catches up from the store's change feed at start, then tails it on an
// interval, applying deletes and re-reading inserted or updated documents. It also
// keeps a small in-memory table of document metadata (URL, title, domain, tags, dates)
// filled from the same feed, which the pipeline uses to describe chunks found by the
// graph retriever and the suggest endpoint uses for title completions.
package indexer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
)

// Store is what the indexer reads from the system of record.
type Store interface {
	Changes(ctx context.Context, since int64, limit int) ([]store.Change, error)
	LatestSeq(ctx context.Context) (int64, error)
	GetDocument(ctx context.Context, id string) (store.Document, error)
	DocumentChunks(ctx context.Context, documentID string) ([]store.Chunk, error)
	ListDocuments(ctx context.Context, o store.ListOptions) (store.DocumentPage, error)
}

// Doc is the metadata of one document the pipeline needs for a result.
type Doc struct {
	ID        string
	URL       string
	Title     string
	Domain    string
	Tags      []string
	Published time.Time
	Updated   time.Time
	// ContentHash is the hash of the page's extracted text: equal hashes are copies
	// of one page at several URLs, which a search shows once.
	ContentHash string
	// History marks version history (release notes, a changelog, a "what's new"
	// page), which ranks lower unless the query asks about versions.
	History bool
	// Generated marks a source listing or a generated index (ranker.PageGenerated),
	// which ranks lower unless the query asks for source code (listings only).
	Generated ranker.Generated
}

// DocFromStore converts a store document.
func DocFromStore(d store.Document) Doc {
	return Doc{ID: d.ID, URL: d.URL, Title: d.Title, Domain: d.Domain, Tags: d.Tags,
		Published: d.PublishedAt, Updated: d.UpdatedAt, ContentHash: d.ContentHash,
		History: ranker.IsVersionHistory(d.URL, d.Title), Generated: ranker.PageGenerated(d.URL, d.Title)}
}

// Config tunes the indexer.
type Config struct {
	Interval  time.Duration // tail interval; default 1s
	BatchSize int           // changes read per round; default 500
	// OnChange, when set, is called with the document of every change read from the
	// feed, before the document is read (the chunk cache forgets its rows there).
	OnChange func(documentID string)
}

// Indexer tails the change feed into a bm25.Index. It is safe for concurrent use.
type Indexer struct {
	st  Store
	ix  *bm25.Index
	log *slog.Logger
	cfg Config

	storeSeq atomic.Int64
	caughtUp atomic.Bool
	lastErr  atomic.Pointer[string]
	lastSync atomic.Int64 // unix nanos of the last successful round

	mu     sync.RWMutex
	docs   map[string]Doc
	titles []titleEntry // sorted by lower-case title; rebuilt lazily
	dirty  bool

	onLag func(lag int64)
}

type titleEntry struct {
	lower string
	doc   string
}

// New returns an indexer feeding ix from st. onLag, when not nil, is called with the
// lag after each round (for a metric).
func New(st Store, ix *bm25.Index, cfg Config, logger *slog.Logger, onLag func(int64)) *Indexer {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 500
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Indexer{st: st, ix: ix, log: logger, cfg: cfg, docs: map[string]Doc{}, onLag: onLag}
}

// Status is the indexer's state for /api/v1/status.
type Status struct {
	IndexWatermark int64     `json:"index_watermark"`
	StoreSeq       int64     `json:"store_seq"`
	IndexLag       int64     `json:"index_lag"`
	IndexedChunks  uint64    `json:"indexed_chunks"`
	Documents      int       `json:"documents"`
	CaughtUp       bool      `json:"caught_up"`
	LastSync       time.Time `json:"last_sync,omitzero"`
	LastError      string    `json:"last_error,omitempty"`
}

// Status reports the watermark, the store's sequence seen last and the lag.
func (x *Indexer) Status() Status {
	s := Status{IndexWatermark: x.ix.Watermark(), StoreSeq: x.storeSeq.Load(), CaughtUp: x.caughtUp.Load()}
	s.IndexLag = max(0, s.StoreSeq-s.IndexWatermark)
	if n, err := x.ix.DocCount(); err == nil {
		s.IndexedChunks = n
	}
	x.mu.RLock()
	s.Documents = len(x.docs)
	x.mu.RUnlock()
	if ns := x.lastSync.Load(); ns > 0 {
		s.LastSync = time.Unix(0, ns).UTC()
	}
	if e := x.lastErr.Load(); e != nil {
		s.LastError = *e
	}
	return s
}

// CaughtUp reports whether the first catch-up with the store has finished. Until then
// the index misses documents and BM25 is reported degraded.
func (x *Indexer) CaughtUp() bool { return x.caughtUp.Load() }

// Run loads the document table, catches up and tails the change feed until ctx ends.
// Store errors are logged and retried on the next round; Run returns only when ctx ends.
func (x *Indexer) Run(ctx context.Context) error {
	loaded := false
	t := time.NewTicker(x.cfg.Interval)
	defer t.Stop()
	for {
		if !loaded {
			if err := x.LoadDocs(ctx); err != nil {
				x.fail("load documents", err)
			} else {
				loaded = true
			}
		}
		if loaded {
			if _, err := x.Sync(ctx); err != nil && ctx.Err() == nil {
				x.fail("sync index", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (x *Indexer) fail(what string, err error) {
	msg := fmt.Sprintf("%s: %v", what, err)
	x.lastErr.Store(&msg)
	x.log.Warn("index sync failed", "step", what, "err", err)
}

// LoadDocs fills the document table from ListDocuments (done once at start; the change
// feed keeps it current afterwards).
func (x *Indexer) LoadDocs(ctx context.Context) error {
	docs := map[string]Doc{}
	after := ""
	for {
		page, err := x.st.ListDocuments(ctx, store.ListOptions{After: after, Limit: 1000})
		if err != nil {
			return fmt.Errorf("list documents after %q: %w", after, err)
		}
		for _, d := range page.Documents {
			docs[d.ID] = DocFromStore(d)
		}
		if page.NextAfter == "" {
			break
		}
		after = page.NextAfter
	}
	x.mu.Lock()
	for id, d := range docs { // keep entries the feed added meanwhile
		if _, ok := x.docs[id]; !ok {
			x.docs[id] = d
		}
	}
	x.dirty = true
	x.mu.Unlock()
	return nil
}

// Sync applies every change after the index watermark, in batches, and returns how
// many changes it applied. After a round that reaches the store's latest sequence the
// indexer counts as caught up.
func (x *Indexer) Sync(ctx context.Context) (int, error) {
	latest, err := x.st.LatestSeq(ctx)
	if err != nil {
		return 0, err
	}
	x.storeSeq.Store(latest)
	applied := 0
	for {
		since := x.ix.Watermark()
		changes, err := x.st.Changes(ctx, since, x.cfg.BatchSize)
		if err != nil {
			return applied, err
		}
		if len(changes) == 0 {
			break
		}
		ops, err := x.opsFor(ctx, changes)
		if err != nil {
			return applied, err
		}
		if err := x.ix.Apply(ctx, ops); err != nil {
			return applied, fmt.Errorf("apply %d changes after seq %d: %w", len(ops), since, err)
		}
		applied += len(changes)
		if last := changes[len(changes)-1].Seq; last > x.storeSeq.Load() {
			x.storeSeq.Store(last)
		}
		if len(changes) < x.cfg.BatchSize {
			break
		}
	}
	if x.ix.Watermark() >= latest {
		if !x.caughtUp.Swap(true) {
			x.log.Info("bm25 index caught up", "watermark", x.ix.Watermark())
		}
	}
	x.lastErr.Store(nil)
	x.lastSync.Store(time.Now().UnixNano())
	if x.onLag != nil {
		x.onLag(max(0, x.storeSeq.Load()-x.ix.Watermark()))
	}
	if applied > 0 {
		x.log.Debug("bm25 index synced", "changes", applied, "watermark", x.ix.Watermark())
	}
	return applied, nil
}

// opsFor turns changes into index operations. A document changed several times in the
// batch is read once, at its last change; reading it gives its current state, so the
// earlier changes are covered too.
func (x *Indexer) opsFor(ctx context.Context, changes []store.Change) ([]bm25.Op, error) {
	last := make(map[string]int, len(changes))
	for i, c := range changes {
		last[c.DocumentID] = i
	}
	if x.cfg.OnChange != nil {
		for id := range last {
			x.cfg.OnChange(id)
		}
	}
	ops := make([]bm25.Op, 0, len(last))
	for i, c := range changes {
		if last[c.DocumentID] != i {
			continue
		}
		op, err := x.opFor(ctx, c)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	// The watermark is the largest Seq applied: make sure the batch's last seq is
	// recorded even when its document was folded into an earlier op.
	if n := len(ops); n > 0 && ops[n-1].Seq < changes[len(changes)-1].Seq {
		ops[n-1].Seq = changes[len(changes)-1].Seq
	}
	return ops, nil
}

func (x *Indexer) opFor(ctx context.Context, c store.Change) (bm25.Op, error) {
	del := bm25.Op{Seq: c.Seq, Kind: bm25.DeleteDocument, DocumentID: c.DocumentID}
	if c.Op == store.OpDelete {
		x.forget(c.DocumentID)
		return del, nil
	}
	doc, err := x.st.GetDocument(ctx, c.DocumentID)
	if errors.Is(err, store.ErrNotFound) {
		x.forget(c.DocumentID)
		return del, nil
	}
	if err != nil {
		return bm25.Op{}, fmt.Errorf("read document %s (change %d): %w", c.DocumentID, c.Seq, err)
	}
	chunks, err := x.st.DocumentChunks(ctx, c.DocumentID)
	if err != nil {
		return bm25.Op{}, fmt.Errorf("read chunks of %s (change %d): %w", c.DocumentID, c.Seq, err)
	}
	x.remember(DocFromStore(doc))
	return bm25.Op{Seq: c.Seq, Kind: bm25.UpsertDocument, DocumentID: doc.ID, Chunks: ChunksFor(doc, chunks)}, nil
}

// ChunksFor converts a document's chunks into index chunks.
func ChunksFor(doc store.Document, chunks []store.Chunk) []bm25.Chunk {
	out := make([]bm25.Chunk, len(chunks))
	for i, ch := range chunks {
		out[i] = bm25.Chunk{
			ID: strconv.FormatInt(ch.ID, 10), DocumentID: doc.ID, URL: doc.URL, Domain: doc.Domain,
			Title: doc.Title, Headings: ch.HeadingPath, Text: ch.Text, Tags: doc.Tags, Published: doc.PublishedAt,
		}
	}
	return out
}

func (x *Indexer) remember(d Doc) {
	x.mu.Lock()
	x.docs[d.ID] = d
	x.dirty = true
	x.mu.Unlock()
}

func (x *Indexer) forget(id string) {
	x.mu.Lock()
	if _, ok := x.docs[id]; ok {
		delete(x.docs, id)
		x.dirty = true
	}
	x.mu.Unlock()
}

// Doc returns the metadata of a document the indexer knows.
func (x *Indexer) Doc(id string) (Doc, bool) {
	x.mu.RLock()
	d, ok := x.docs[id]
	x.mu.RUnlock()
	return d, ok
}

// Count returns how many known documents carry every one of tags (case-insensitive)
// and, when domain is not empty, are on that host: the size of the corpus a search
// with that filter covers.
func (x *Indexer) Count(tags []string, domain string) int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	n := 0
	for _, d := range x.docs {
		if (domain == "" || strings.EqualFold(d.Domain, domain)) && hasAllTags(d.Tags, tags) {
			n++
		}
	}
	return n
}

func hasAllTags(have, want []string) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(h string) bool { return strings.EqualFold(h, w) }) {
			return false
		}
	}
	return true
}

// TitleCompletion is a document title starting with (or containing a word starting
// with) a prefix.
type TitleCompletion struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Titles returns up to limit documents whose title starts with prefix, or has a word
// starting with it (case-insensitive), title prefix matches first.
func (x *Indexer) Titles(prefix string, limit int) []TitleCompletion {
	p := strings.ToLower(strings.TrimSpace(prefix))
	if p == "" || limit <= 0 {
		return []TitleCompletion{}
	}
	x.mu.Lock()
	if x.dirty {
		x.titles = x.titles[:0]
		for id, d := range x.docs {
			if d.Title != "" {
				x.titles = append(x.titles, titleEntry{lower: strings.ToLower(d.Title), doc: id})
			}
		}
		sort.Slice(x.titles, func(i, j int) bool {
			if x.titles[i].lower != x.titles[j].lower {
				return x.titles[i].lower < x.titles[j].lower
			}
			return x.titles[i].doc < x.titles[j].doc
		})
		x.dirty = false
	}
	titles := x.titles
	docs := x.docs
	out := []TitleCompletion{}
	seen := map[string]bool{}
	add := func(e titleEntry) bool {
		d := docs[e.doc]
		if seen[d.Title] {
			return len(out) < limit
		}
		seen[d.Title] = true
		out = append(out, TitleCompletion{Title: d.Title, URL: d.URL})
		return len(out) < limit
	}
	// Titles starting with the prefix: a binary search and a scan of the run.
	i := sort.Search(len(titles), func(i int) bool { return titles[i].lower >= p })
	for ; i < len(titles) && strings.HasPrefix(titles[i].lower, p); i++ {
		if !add(titles[i]) {
			x.mu.Unlock()
			return out
		}
	}
	// Then titles with a later word starting with it (a linear scan; titles are few).
	for _, e := range titles {
		if strings.HasPrefix(e.lower, p) {
			continue
		}
		if slices.ContainsFunc(strings.Fields(e.lower)[1:], func(w string) bool { return strings.HasPrefix(w, p) }) {
			if !add(e) {
				break
			}
		}
	}
	x.mu.Unlock()
	return out
}

// Fill returns a bm25.FillFunc that writes every document of st into a fresh index,
// with the store's latest sequence (taken before the walk) as the ops' Seq, so tailing
// resumes from there; changes made during the walk are re-applied by the tail, which is
// harmless because operations are idempotent.
func Fill(st Store, logger *slog.Logger) bm25.FillFunc {
	return func(ctx context.Context, ix *bm25.Index) error {
		seq, err := st.LatestSeq(ctx)
		if err != nil {
			return err
		}
		after := ""
		docs, chunks := 0, 0
		start := time.Now()
		for {
			page, err := st.ListDocuments(ctx, store.ListOptions{After: after, Limit: 200})
			if err != nil {
				return fmt.Errorf("list documents after %q: %w", after, err)
			}
			ops := make([]bm25.Op, 0, len(page.Documents))
			for _, d := range page.Documents {
				cs, err := st.DocumentChunks(ctx, d.ID)
				if err != nil {
					return fmt.Errorf("read chunks of %s: %w", d.ID, err)
				}
				ops = append(ops, bm25.Op{Seq: seq, Kind: bm25.UpsertDocument, DocumentID: d.ID, Chunks: ChunksFor(d, cs)})
				chunks += len(cs)
			}
			if len(ops) == 0 { // an empty store still records the watermark (a no-op delete)
				ops = append(ops, bm25.Op{Seq: seq, Kind: bm25.DeleteChunk})
			}
			if err := ix.Apply(ctx, ops); err != nil {
				return fmt.Errorf("index documents after %q: %w", after, err)
			}
			docs += len(page.Documents)
			if page.NextAfter == "" {
				break
			}
			after = page.NextAfter
			if logger != nil && docs%2000 == 0 {
				logger.Info("reindex progress", "documents", docs, "chunks", chunks)
			}
		}
		if logger != nil {
			logger.Info("reindex filled", "documents", docs, "chunks", chunks, "watermark", seq,
				"took_ms", time.Since(start).Milliseconds())
		}
		return nil
	}
}
