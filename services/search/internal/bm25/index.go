package bm25

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search/query"
	index "github.com/blevesearch/bleve_index_api"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Field names in the Bleve documents.
const (
	fieldDocID     = "doc_id"
	fieldURL       = "url"
	fieldDomain    = "domain"
	fieldTags      = "tags"
	fieldPublished = "published"
	fieldTitle     = "title"
	fieldHeadings  = "headings"
	fieldText      = "text"
)

// Query-time field boosts (Bleve has no index-time boosts). Each field is scored with
// its own BM25 length normalisation, so a term in a short title already scores high,
// and the ranker has a title signal of its own: the title is not boosted (it used to
// be ×3, headings ×2, which let one generic word in a page title such as "work",
// "file" or "load" lift every chunk of that page). A heading counts half, like a
// heading match in the ranker's title signal (ranker.HeadingFactor): headings are
// shared by every chunk of a section and are often generic ("Examples", "Notes").
// On the pydocs evaluation (eval/pydocs/RESULTS.md) BM25 alone went from nDCG@10
// 0.553 to 0.607 and the full pipeline improved.
const (
	BoostTitle    = 1.0
	BoostHeadings = 0.5
	BoostText     = 1.0
)

// Limits.
const (
	// MaxK is the largest number of hits Search returns.
	MaxK = 10000
	// MaxQueryBytes is how much of a query string is analysed; longer queries are cut
	// at a word boundary so a 10 KB query cannot build a disjunction of thousands of terms.
	MaxQueryBytes = 1024
	// maxChunksPerDocument bounds the lookup of a document's chunks (the store's limit).
	maxChunksPerDocument = 100000
)

// Internal keys stored inside the Bleve index.
var (
	keyWatermark      = []byte("kgsearch.watermark")
	keyMappingVersion = []byte("kgsearch.mapping_version")
	keyFieldStats     = []byte("kgsearch.field_lengths") // fieldStats
	keyLengthPrefix   = "kgsearch.len/"                  // + chunk id: its fieldLengths
)

// mappingVersion changes whenever newMapping, or what the index keeps beside the
// Bleve documents, changes in a way that needs a rebuild. 2: field length totals
// and per-chunk field lengths for standard BM25 (scoring.go).
const mappingVersion = "2"

func lengthKey(chunkID string) []byte { return []byte(keyLengthPrefix + chunkID) }

// Errors.
var (
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("bm25 index is closed")
	// ErrMappingVersion means the index on disk was built with another mapping and
	// must be rebuilt (Rebuild) from the store.
	ErrMappingVersion = errors.New("bm25 index mapping version differs; rebuild the index")
	// ErrInvalid is wrapped by errors about bad arguments.
	ErrInvalid = errors.New("invalid argument")
	// ErrLocked means another Index (in this or another process) holds the directory.
	ErrLocked = errors.New("bm25 index is open elsewhere")
)

// lockTimeout is how long Open waits for the index directory's lock.
const lockTimeout = "2s"

// Chunk is what the index holds of one chunk. Text, Title and Headings are analysed
// with the English analyzer (lowercase, stop words, possessives, Snowball stemming);
// DocumentID, URL, Domain and Tags are exact keywords; Published is a date.
type Chunk struct {
	ID         string // chunk id, the Bleve document id
	DocumentID string
	URL        string
	Domain     string // compared lower-case
	Title      string
	Headings   []string
	Text       string
	Tags       []string  // compared lower-case
	Published  time.Time // zero when unknown (or outside 1677..2262): never matches a date filter
}

// OpKind says what an Op does.
type OpKind uint8

// Operations.
const (
	// UpsertDocument replaces every chunk of DocumentID with Chunks: chunks of the
	// document that are not in Chunks are deleted.
	UpsertDocument OpKind = iota + 1
	// DeleteDocument deletes every chunk of DocumentID.
	DeleteDocument
	// UpsertChunk indexes Chunks (each replaces the chunk with the same id).
	UpsertChunk
	// DeleteChunk deletes the chunks whose ids are in ChunkIDs.
	DeleteChunk
)

func (k OpKind) String() string {
	switch k {
	case UpsertDocument:
		return "upsert-document"
	case DeleteDocument:
		return "delete-document"
	case UpsertChunk:
		return "upsert-chunk"
	case DeleteChunk:
		return "delete-chunk"
	}
	return fmt.Sprintf("op(%d)", uint8(k))
}

// Op is one change to apply. Seq is the store's change sequence number; the index
// watermark becomes the largest Seq applied.
type Op struct {
	Seq        int64
	Kind       OpKind
	DocumentID string
	Chunks     []Chunk
	ChunkIDs   []string
}

// Filter restricts Search. Zero fields do not filter. Filters never change scores.
type Filter struct {
	Domain          string    // exact host, case-insensitive
	Tags            []string  // the chunk must carry every tag (case-insensitive)
	PublishedAfter  time.Time // inclusive
	PublishedBefore time.Time // exclusive
}

// Hit is one search result.
type Hit struct {
	ChunkID    string
	DocumentID string
	URL        string
	Title      string
	Published  time.Time // zero when unknown
	Score      float64   // BM25 score summed over fields with their boosts
}

// Index is the search service's BM25 index over chunks. Methods are safe for
// concurrent use; Apply calls are serialised.
type Index struct {
	path string

	mu       sync.RWMutex // guards idx (swapped by Rebuild, nil after Close)
	idx      bleve.Index
	wmark    atomic.Int64
	stats    atomic.Pointer[fieldStats] // field length totals of idx
	analyzer analysis.Analyzer          // the English analyzer of the text fields
	applyM   sync.Mutex                 // serialises Apply and Rebuild
}

// Open opens the index at path, creating it when missing. It finishes or cleans up an
// interrupted Rebuild first. An index built with another mapping version yields
// ErrMappingVersion.
func Open(path string) (*Index, error) {
	if path == "" {
		return nil, fmt.Errorf("open bm25 index: %w: empty path", ErrInvalid)
	}
	if err := recoverSwap(path); err != nil {
		return nil, fmt.Errorf("open bm25 index %s: %w", path, err)
	}
	bi, err := openOrCreate(path)
	if err != nil {
		return nil, fmt.Errorf("open bm25 index %s: %w", path, err)
	}
	ix := &Index{path: path, idx: bi}
	if err := ix.load(bi); err != nil {
		_ = bi.Close()
		return nil, fmt.Errorf("open bm25 index %s: %w", path, err)
	}
	return ix, nil
}

// load reads the watermark, the field length totals and the analyzer of bi.
func (ix *Index) load(bi bleve.Index) error {
	w, err := readWatermark(bi)
	if err != nil {
		return err
	}
	v, err := bi.GetInternal(keyFieldStats)
	if err != nil {
		return fmt.Errorf("read field length totals: %w", err)
	}
	st, err := decodeFieldStats(v)
	if err != nil {
		return err
	}
	a := bi.Mapping().AnalyzerNamed(en.AnalyzerName)
	if a == nil {
		return fmt.Errorf("no %s analyzer in the mapping", en.AnalyzerName)
	}
	ix.wmark.Store(w)
	ix.stats.Store(&st)
	ix.analyzer = a
	return nil
}

func openOrCreate(path string) (bleve.Index, error) {
	bi, err := bleve.OpenUsing(path, map[string]any{"bolt_timeout": lockTimeout})
	switch {
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, fmt.Errorf("%w (waited %s for the lock): %w", ErrLocked, lockTimeout, err)
	case err == nil:
		v, err := bi.GetInternal(keyMappingVersion)
		if err != nil {
			_ = bi.Close()
			return nil, fmt.Errorf("read mapping version: %w", err)
		}
		if string(v) != mappingVersion {
			_ = bi.Close()
			return nil, fmt.Errorf("%w: on disk %q, want %q", ErrMappingVersion, v, mappingVersion)
		}
		return bi, nil
	case errors.Is(err, bleve.ErrorIndexPathDoesNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			return nil, fmt.Errorf("create parent directory: %w", err)
		}
		bi, err := bleve.New(path, newMapping())
		if err != nil {
			return nil, fmt.Errorf("create: %w", err)
		}
		if err := bi.SetInternal(keyMappingVersion, []byte(mappingVersion)); err != nil {
			_ = bi.Close()
			return nil, fmt.Errorf("record mapping version: %w", err)
		}
		return bi, nil
	default:
		return nil, err
	}
}

// newMapping is the static mapping of chunk documents: nothing dynamic, nothing in
// _all, BM25 scoring.
func newMapping() *mapping.IndexMappingImpl {
	text := func(store bool) *mapping.FieldMapping {
		fm := bleve.NewTextFieldMapping()
		fm.Analyzer = en.AnalyzerName
		fm.Store = store
		fm.IncludeInAll = false
		fm.IncludeTermVectors = false
		fm.DocValues = false
		return fm
	}
	kw := func() *mapping.FieldMapping {
		fm := bleve.NewKeywordFieldMapping()
		fm.Analyzer = keyword.Name
		fm.Store = true
		fm.IncludeInAll = false
		fm.IncludeTermVectors = false
		fm.DocValues = false
		return fm
	}
	date := bleve.NewDateTimeFieldMapping()
	date.Store = true
	date.IncludeInAll = false
	date.DocValues = false

	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldDocID, kw())
	dm.AddFieldMappingsAt(fieldURL, kw())
	dm.AddFieldMappingsAt(fieldDomain, kw())
	dm.AddFieldMappingsAt(fieldTags, kw())
	dm.AddFieldMappingsAt(fieldPublished, date)
	dm.AddFieldMappingsAt(fieldTitle, text(true))
	dm.AddFieldMappingsAt(fieldHeadings, text(false))
	dm.AddFieldMappingsAt(fieldText, text(false))

	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	im.DefaultMapping = dm
	im.DefaultAnalyzer = en.AnalyzerName
	im.IndexDynamic = false
	im.StoreDynamic = false
	im.DocValuesDynamic = false
	return im
}

func readWatermark(bi bleve.Index) (int64, error) {
	v, err := bi.GetInternal(keyWatermark)
	if err != nil {
		return 0, fmt.Errorf("read watermark: %w", err)
	}
	if len(v) == 0 {
		return 0, nil
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("read watermark: %d bytes, want 8", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), nil
}

func encodeWatermark(w int64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(w))
	return b[:]
}

// Path returns the directory of the index.
func (ix *Index) Path() string { return ix.path }

// Watermark returns the largest change sequence number applied (0 for a new index).
func (ix *Index) Watermark() int64 { return ix.wmark.Load() }

// DocCount returns the number of chunks in the index.
func (ix *Index) DocCount() (uint64, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.idx == nil {
		return 0, ErrClosed
	}
	n, err := ix.idx.DocCount()
	if err != nil {
		return 0, fmt.Errorf("count bm25 chunks: %w", err)
	}
	return n, nil
}

// Close closes the index. Further calls return ErrClosed.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.idx == nil {
		return nil
	}
	err := ix.idx.Close()
	ix.idx = nil
	if err != nil {
		return fmt.Errorf("close bm25 index: %w", err)
	}
	return nil
}

// Apply applies the operations in order, in one Bleve batch that also records the new
// watermark (the largest Seq, if larger than the current one): after a crash either the
// whole batch and its watermark are in the index or none of it is, so a tailer resumes
// from Watermark() without losing or double-applying a change (re-applying is harmless
// anyway: operations are idempotent).
func (ix *Index) Apply(ctx context.Context, ops []Op) error {
	ix.applyM.Lock()
	defer ix.applyM.Unlock()
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.idx == nil {
		return ErrClosed
	}
	return ix.apply(ctx, ix.idx, ops)
}

func (ix *Index) apply(ctx context.Context, bi bleve.Index, ops []Op) error {
	if len(ops) == 0 {
		return nil
	}
	b := &batch{Batch: bi.NewBatch(), bi: bi, an: ix.analyzer, stats: *ix.stats.Load(), lengths: map[string]*fieldLengths{}}
	// Chunks added to the batch per document, so that a later op in the same batch
	// can delete or replace them even though they are not in the index yet.
	pending := map[string]map[string]struct{}{}
	wm := ix.wmark.Load()
	for i, op := range ops {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("apply bm25 ops: %w", err)
		}
		if op.Seq < 0 {
			return fmt.Errorf("apply bm25 op %d: %w: negative seq %d", i, ErrInvalid, op.Seq)
		}
		var err error
		switch op.Kind {
		case UpsertDocument, DeleteDocument:
			err = ix.applyDocument(ctx, bi, b, op, pending)
		case UpsertChunk:
			for _, c := range op.Chunks {
				if err = b.index(c); err != nil {
					break
				}
				addPending(pending, c.DocumentID, c.ID)
			}
		case DeleteChunk:
			for _, id := range op.ChunkIDs {
				if id == "" {
					err = fmt.Errorf("%w: empty chunk id", ErrInvalid)
					break
				}
				if err = b.delete(id); err != nil {
					break
				}
			}
		default:
			err = fmt.Errorf("%w: unknown op kind %d", ErrInvalid, op.Kind)
		}
		if err != nil {
			return fmt.Errorf("apply bm25 op %d (%s seq %d): %w", i, op.Kind, op.Seq, err)
		}
		wm = max(wm, op.Seq)
	}
	if wm > ix.wmark.Load() {
		b.SetInternal(keyWatermark, encodeWatermark(wm))
	}
	b.SetInternal(keyFieldStats, b.stats.encode())
	if err := bi.Batch(b.Batch); err != nil {
		return fmt.Errorf("apply bm25 batch of %d ops: %w", len(ops), err)
	}
	ix.wmark.Store(wm)
	ix.stats.Store(&b.stats)
	return nil
}

func addPending(p map[string]map[string]struct{}, docID, chunkID string) {
	s := p[docID]
	if s == nil {
		s = map[string]struct{}{}
		p[docID] = s
	}
	s[chunkID] = struct{}{}
}

// applyDocument adds an UpsertDocument or DeleteDocument to the batch: stale chunks of
// the document (in the index or earlier in the batch) are deleted, new ones indexed.
func (ix *Index) applyDocument(ctx context.Context, bi bleve.Index, b *batch, op Op, pending map[string]map[string]struct{}) error {
	if op.DocumentID == "" {
		return fmt.Errorf("%w: empty document id", ErrInvalid)
	}
	existing, err := chunkIDsOf(ctx, bi, op.DocumentID)
	if err != nil {
		return err
	}
	for id := range pending[op.DocumentID] {
		existing = append(existing, id)
	}
	keep := map[string]struct{}{}
	if op.Kind == UpsertDocument {
		for _, c := range op.Chunks {
			if c.DocumentID != "" && c.DocumentID != op.DocumentID {
				return fmt.Errorf("%w: chunk %s belongs to document %s, not %s", ErrInvalid, c.ID, c.DocumentID, op.DocumentID)
			}
			c.DocumentID = op.DocumentID
			if err := b.index(c); err != nil {
				return err
			}
			keep[c.ID] = struct{}{}
		}
	}
	for _, id := range existing {
		if _, ok := keep[id]; !ok {
			if err := b.delete(id); err != nil {
				return err
			}
		}
	}
	delete(pending, op.DocumentID)
	for id := range keep {
		addPending(pending, op.DocumentID, id)
	}
	return nil
}

// batch is a Bleve batch that also keeps the field length totals (fieldStats) up to
// date: each indexed chunk's field lengths are stored under lengthKey(id), so that
// replacing or deleting it subtracts exactly what it added, and re-applying an
// operation leaves the totals unchanged.
type batch struct {
	*bleve.Batch
	bi      bleve.Index
	an      analysis.Analyzer
	stats   fieldStats
	lengths map[string]*fieldLengths // chunk id → lengths set in this batch (nil: deleted in it)
}

// previous returns the lengths the chunk currently counts with, if it is indexed.
func (b *batch) previous(id string) (fieldLengths, bool, error) {
	if l, ok := b.lengths[id]; ok {
		if l == nil {
			return fieldLengths{}, false, nil
		}
		return *l, true, nil
	}
	v, err := b.bi.GetInternal(lengthKey(id))
	if err != nil {
		return fieldLengths{}, false, fmt.Errorf("read field lengths of chunk %s: %w", id, err)
	}
	l, ok := decodeFieldLengths(v)
	return l, ok, nil
}

// index adds (or replaces) one chunk.
func (b *batch) index(c Chunk) error {
	if err := indexChunk(b.Batch, c); err != nil {
		return err
	}
	old, ok, err := b.previous(c.ID)
	if err != nil {
		return err
	}
	if ok {
		b.stats.add(old, -1)
	}
	l := lengthsOf(b.an, c)
	b.stats.add(l, +1)
	b.lengths[c.ID] = &l
	b.SetInternal(lengthKey(c.ID), l.encode())
	return nil
}

// delete removes one chunk (a chunk that is not indexed is no error).
func (b *batch) delete(id string) error {
	b.Delete(id)
	old, ok, err := b.previous(id)
	if err != nil {
		return err
	}
	if ok {
		b.stats.add(old, -1)
	}
	b.lengths[id] = nil
	b.DeleteInternal(lengthKey(id))
	return nil
}

// indexChunk adds one chunk to the batch.
func indexChunk(b *bleve.Batch, c Chunk) error {
	if c.ID == "" {
		return fmt.Errorf("%w: chunk with empty id (document %q)", ErrInvalid, c.DocumentID)
	}
	doc := map[string]any{
		fieldDocID:    c.DocumentID,
		fieldURL:      c.URL,
		fieldDomain:   strings.ToLower(c.Domain),
		fieldTitle:    c.Title,
		fieldHeadings: c.Headings,
		fieldText:     c.Text,
	}
	if len(c.Tags) > 0 {
		tags := make([]string, len(c.Tags))
		for i, t := range c.Tags {
			tags[i] = strings.ToLower(t)
		}
		doc[fieldTags] = tags
	}
	if !c.Published.IsZero() && dateInRange(c.Published) {
		doc[fieldPublished] = c.Published.UTC()
	}
	if err := b.Index(c.ID, doc); err != nil {
		return fmt.Errorf("index chunk %s: %w", c.ID, err)
	}
	return nil
}

// chunkIDsOf returns the ids of the indexed chunks of a document.
func chunkIDsOf(ctx context.Context, bi bleve.Index, docID string) ([]string, error) {
	q := bleve.NewTermQuery(docID)
	q.SetField(fieldDocID)
	req := bleve.NewSearchRequestOptions(q, maxChunksPerDocument, 0, false)
	req.Score = "none"
	res, err := bi.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("find chunks of document %s: %w", docID, err)
	}
	ids := make([]string, len(res.Hits))
	for i, h := range res.Hits {
		ids[i] = h.ID
	}
	return ids, nil
}

// Compact merges the index's segments into one (Scorch force merge) and waits for it.
// Searches keep working meanwhile. Rebuild compacts the fresh index before swapping it
// in; a long-running index is merged in the background by Scorch and needs no call.
func (ix *Index) Compact(ctx context.Context) error {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.idx == nil {
		return ErrClosed
	}
	adv, err := ix.idx.Advanced()
	if err != nil {
		return fmt.Errorf("compact bm25 index: %w", err)
	}
	s, ok := adv.(*scorch.Scorch)
	if !ok {
		return fmt.Errorf("compact bm25 index: %w: not a scorch index (%T)", ErrInvalid, adv)
	}
	if err := s.ForceMerge(ctx, nil); err != nil {
		return fmt.Errorf("compact bm25 index: %w", err)
	}
	return nil
}

// DeleteDocument deletes every chunk of a document without moving the watermark (use
// Apply with a DeleteDocument op to record the change's seq).
func (ix *Index) DeleteDocument(ctx context.Context, documentID string) error {
	if err := ix.Apply(ctx, []Op{{Kind: DeleteDocument, DocumentID: documentID}}); err != nil {
		return fmt.Errorf("delete document %s: %w", documentID, err)
	}
	return nil
}

// Search returns the k best chunks for the query text under BM25, over title,
// headings (×0.5) and text, restricted by the filter. The query is analysed as
// text, never parsed as query syntax, so operators and injection strings are just words.
// A query with no searchable words returns no hits.
func (ix *Index) Search(ctx context.Context, text string, k int, f Filter) ([]Hit, error) {
	return ix.search(ctx, text, k, f, true)
}

// SearchIDs is Search without loading the stored fields: hits carry only ChunkID and
// Score. Loading the fields of 100 hits was about two thirds of a search's CPU; callers
// that read the chunks from the store anyway (the search pipeline) do not need them.
func (ix *Index) SearchIDs(ctx context.Context, text string, k int, f Filter) ([]Hit, error) {
	return ix.search(ctx, text, k, f, false)
}

func (ix *Index) search(ctx context.Context, text string, k int, f Filter, fields bool) ([]Hit, error) {
	if k < 1 || k > MaxK {
		return nil, fmt.Errorf("bm25 search: %w: k must be in 1..%d, got %d", ErrInvalid, MaxK, k)
	}
	if !f.PublishedAfter.IsZero() && !f.PublishedBefore.IsZero() && !f.PublishedAfter.Before(f.PublishedBefore) {
		return nil, fmt.Errorf("bm25 search: %w: published_after %s is not before published_before %s",
			ErrInvalid, f.PublishedAfter.Format(time.RFC3339), f.PublishedBefore.Format(time.RFC3339))
	}
	for _, d := range []struct {
		name string
		t    time.Time
	}{{"published_after", f.PublishedAfter}, {"published_before", f.PublishedBefore}} {
		if !d.t.IsZero() && !dateInRange(d.t) {
			return nil, fmt.Errorf("bm25 search: %w: %s %s is outside %d..%d", ErrInvalid, d.name,
				d.t.Format(time.RFC3339), query.MinRFC3339CompatibleTime.Year(), query.MaxRFC3339CompatibleTime.Year())
		}
	}
	text = truncateQuery(text, MaxQueryBytes)
	if strings.TrimSpace(text) == "" {
		return []Hit{}, nil
	}
	// The query reads the analyzer and field statistics of the open index, which
	// Rebuild replaces under the write lock.
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.idx == nil {
		return nil, ErrClosed
	}
	req := bleve.NewSearchRequestOptions(ix.buildQuery(text, f), k, 0, false)
	if fields {
		req.Fields = []string{fieldDocID, fieldURL, fieldTitle, fieldPublished}
	}
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("bm25 search: %w", err)
	}
	hits := make([]Hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = Hit{
			ChunkID:    h.ID,
			DocumentID: fieldString(h.Fields, fieldDocID),
			URL:        fieldString(h.Fields, fieldURL),
			Title:      fieldString(h.Fields, fieldTitle),
			Score:      h.Score,
		}
		if s := fieldString(h.Fields, fieldPublished); s != "" {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				hits[i].Published = t
			}
		}
	}
	return hits, nil
}

// ScoreIDs returns the BM25 score, under the same query as Search, of each listed
// chunk that matches a query term (hits carry ChunkID and Score only, best first).
// The search pipeline uses it to complete the BM25 signal of candidates that other
// retrievers found, so a chunk is not scored 0 on BM25 just for ranking below the BM25
// retriever's cut-off. The scores are comparable with Search's: same query, same index
// statistics. Its cost grows with the number of ids, not with the terms' posting
// lists: the listed chunks drive the walk and each term's postings are advanced to
// them (scoreIDsQuery).
func (ix *Index) ScoreIDs(ctx context.Context, text string, ids []string) ([]Hit, error) {
	text = truncateQuery(text, MaxQueryBytes)
	if strings.TrimSpace(text) == "" || len(ids) == 0 {
		return []Hit{}, nil
	}
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.idx == nil {
		return nil, ErrClosed
	}
	q := &scoreIDsQuery{terms: ix.standard(text), ids: ids}
	req := bleve.NewSearchRequestOptions(q, len(ids), 0, false)
	res, err := ix.idx.SearchInContext(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("bm25 score %d chunks: %w", len(ids), err)
	}
	hits := make([]Hit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = Hit{ChunkID: h.ID, Score: h.Score}
	}
	return hits, nil
}

// buildQuery builds the query objects: standard BM25 over the analysed fields (the
// text goes through the analyzer, never the query-string parser; scoring.go) and, as
// a non-scoring filter, the conjunction of the filter clauses.
func (ix *Index) buildQuery(text string, f Filter) query.Query {
	var should query.Query = ix.standard(text)
	var filters []query.Query
	if f.Domain != "" {
		q := bleve.NewTermQuery(strings.ToLower(strings.TrimSpace(f.Domain)))
		q.SetField(fieldDomain)
		filters = append(filters, q)
	}
	for _, t := range f.Tags {
		q := bleve.NewTermQuery(strings.ToLower(strings.TrimSpace(t)))
		q.SetField(fieldTags)
		filters = append(filters, q)
	}
	if !f.PublishedAfter.IsZero() || !f.PublishedBefore.IsZero() {
		inclusive, exclusive := true, false
		q := bleve.NewDateRangeInclusiveQuery(f.PublishedAfter.UTC(), f.PublishedBefore.UTC(), &inclusive, &exclusive)
		q.SetField(fieldPublished)
		filters = append(filters, q)
	}
	if len(filters) == 0 {
		return should
	}
	bq := bleve.NewBooleanQuery()
	bq.AddMust(should)
	bq.AddFilter(bleve.NewConjunctionQuery(filters...))
	return bq
}

// standard is the standard BM25 query of the text over the analysed fields.
func (ix *Index) standard(text string) *standardQuery {
	return &standardQuery{
		terms:  queryTerms(ix.analyzer, text),
		boosts: [numScored]float64{BoostTitle, BoostHeadings, BoostText},
		stats:  *ix.stats.Load(),
	}
}

// truncateQuery cuts s to at most n bytes, at the last space before the limit.
func truncateQuery(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := strings.LastIndexAny(s[:n+1], " \t\n")
	if cut <= 0 {
		// One huge word: cut at a UTF-8 boundary.
		cut = n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
	}
	return s[:cut]
}

func fieldString(fields map[string]any, name string) string {
	s, _ := fields[name].(string)
	return s
}

// dateInRange reports whether Bleve can represent t (nanoseconds since 1970 in an int64).
func dateInRange(t time.Time) bool {
	return !t.Before(query.MinRFC3339CompatibleTime) && !t.After(query.MaxRFC3339CompatibleTime)
}
