// Package pipeline turns a fetched page into a stored document: extract the
// main text (htmltext), split it into token-sized chunks, embed the chunks in
// batches, and upsert document, chunks and the kg outbox payload in one
// MariaDB transaction (store.UpsertDocument). Pages whose extracted content
// has not changed since they were stored are recognised by a content hash and
// skipped before the expensive embedding step.
package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
)

// Piece is one chunk of a page's text, as a Splitter cuts it.
type Piece struct {
	Text        string
	Tokens      int
	Start, End  int // byte offsets into htmltext.Page.Text
	HeadingPath []string
}

// Splitter cuts a page's text into chunks.
type Splitter interface {
	Split(page *htmltext.Page) ([]Piece, error)
}

// Outcome says what Index did with a page.
type Outcome string

// Outcomes of Index.
const (
	Stored    Outcome = "stored"    // inserted or replaced
	Unchanged Outcome = "unchanged" // same content as the stored version
	Empty     Outcome = "empty"     // no text to index
	NoIndex   Outcome = "noindex"   // the page asks not to be indexed
	// ScriptRendered is a page with no text because scripts build it in
	// the browser: its HTML is an empty shell (htmltext.DetectShell).
	ScriptRendered Outcome = "script_rendered"
)

// Timings are the stage timings of one page.
type Timings struct {
	Extract, Chunk, Embed, Store time.Duration
}

// Result is what Index did.
type Result struct {
	Outcome Outcome
	// Shell says what shows that the page is rendered by scripts; set
	// when Outcome is ScriptRendered.
	Shell    *htmltext.Shell
	Document store.Document
	Chunks   int
	// Retagged says that an unchanged page got the request's tags in place
	// of those it was stored with (without being embedded again); RetagDetail
	// says it in words.
	Retagged    bool
	RetagDetail string
	Timings     Timings
}

// Store keeps a document with its chunks and kg outbox row in one
// transaction (store.Store).
type Store interface {
	UpsertDocument(ctx context.Context, doc *store.Document, chunks []store.Chunk, outboxPayload json.RawMessage) (store.UpsertResult, error)
	SetDocumentTags(ctx context.Context, id string, tags []string) (store.Document, error)
}

// Pipeline indexes pages. It is safe for concurrent use.
type Pipeline struct {
	st       Store
	embedder embed.Embedder
	splitter Splitter
	// variant is mixed into the content hash: a page is re-indexed when the
	// chunking settings or the model change, even if its text did not.
	variant  string
	maxLinks int
}

// New returns a Pipeline; variant names the chunking settings (e.g. "256/32").
func New(st Store, e embed.Embedder, s Splitter, variant string) *Pipeline {
	return &Pipeline{st: st, embedder: e, splitter: s, variant: e.Info().Name + "/" + variant, maxLinks: 1000}
}

// ErrEmbed wraps embedding failures; ErrStore wraps store failures.
var (
	ErrEmbed = errors.New("embed chunks")
	ErrStore = errors.New("store document")
)

// Extract runs the main-text extraction on a fetched body.
func Extract(pageURL *url.URL, contentType string, body []byte, hdr http.Header) (*htmltext.Page, time.Duration, error) {
	start := time.Now()
	p, err := htmltext.Extract(body, pageURL, contentType, hdr)
	return p, time.Since(start), err
}

// ContentHash is the hash that decides whether a page changed.
func (p *Pipeline) ContentHash(page *htmltext.Page) string {
	h := sha256.New()
	h.Write([]byte(p.variant))
	h.Write([]byte{0})
	h.Write([]byte(page.Title))
	h.Write([]byte{0})
	h.Write([]byte(page.Text))
	return hex.EncodeToString(h.Sum(nil))
}

// Page is an extracted page with what the store keeps about its fetch.
type Page struct {
	URL          string // canonical URL: the document's identity
	Extracted    *htmltext.Page
	ETag         string
	LastModified string
	FetchedAt    time.Time
	Tags         []string
	// Previous is the stored version, nil when the page is new.
	Previous *store.Document
	// Body and ContentType are the fetched answer, for telling a page that
	// scripts render in the browser from one that has no text; a page
	// without Body is never taken for such a shell.
	Body        []byte
	ContentType string
}

// Index chunks, embeds and stores a page, unless its content is unchanged.
func (p *Pipeline) Index(ctx context.Context, in Page) (Result, error) {
	var res Result
	page := in.Extracted
	if page.Robots.NoIndex {
		res.Outcome = NoIndex
		return res, nil
	}
	if sh := scriptShell(in); sh != nil {
		res.Outcome = ScriptRendered
		res.Shell = sh
		return res, nil
	}
	if strings.TrimSpace(page.Text) == "" {
		res.Outcome = Empty
		return res, nil
	}
	hash := p.ContentHash(page)
	if in.Previous != nil && in.Previous.ContentHash == hash && in.Previous.ChunkCount > 0 {
		res.Outcome = Unchanged
		res.Document = *in.Previous
		res.Chunks = in.Previous.ChunkCount
		t := time.Now()
		doc, detail, err := p.Retag(ctx, in.Previous, in.Tags)
		if detail != "" {
			res.Timings.Store = time.Since(t)
		}
		if err != nil {
			return res, err
		}
		res.Document, res.Retagged, res.RetagDetail = doc, detail != "", detail
		return res, nil
	}

	t := time.Now()
	pieces, err := p.splitter.Split(page)
	res.Timings.Chunk = time.Since(t)
	if err != nil {
		return res, fmt.Errorf("chunk %s: %w", in.URL, err)
	}
	if len(pieces) == 0 {
		res.Outcome = Empty
		return res, nil
	}

	t = time.Now()
	texts := make([]string, len(pieces))
	for i, pc := range pieces {
		texts[i] = embedText(page.Title, pc)
	}
	vecs, err := p.embedder.Embed(ctx, texts)
	res.Timings.Embed = time.Since(t)
	if err != nil {
		return res, fmt.Errorf("%w of %s: %w", ErrEmbed, in.URL, err)
	}
	if len(vecs) != len(pieces) {
		return res, fmt.Errorf("%w of %s: got %d vectors for %d chunks", ErrEmbed, in.URL, len(vecs), len(pieces))
	}

	doc := &store.Document{
		URL:          in.URL,
		Title:        clip(page.Title, 1000),
		Lang:         clip(page.Language, 16),
		ContentHash:  hash,
		ETag:         clip(in.ETag, 512),
		LastModified: clip(in.LastModified, 64),
		PublishedAt:  firstTime(page.Published, page.Modified),
		FetchedAt:    in.FetchedAt,
		Tags:         in.Tags,
	}
	for _, h := range page.Headings {
		doc.Headings = append(doc.Headings, h.Text)
	}
	chunks := make([]store.Chunk, len(pieces))
	for i, pc := range pieces {
		chunks[i] = store.Chunk{
			Text: pc.Text, TokenCount: pc.Tokens, StartOffset: pc.Start, EndOffset: pc.End,
			HeadingPath: pc.HeadingPath, Embedding: vecs[i],
		}
	}
	payload, err := json.Marshal(p.kgDocument(in.URL, doc, page, pieces))
	if err != nil {
		return res, fmt.Errorf("encode kg payload of %s: %w", in.URL, err)
	}

	t = time.Now()
	// The store write is not abandoned half way by a cancelled crawl: a page that
	// got this far is stored, so a resumed job need not fetch it again.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if _, err := p.st.UpsertDocument(wctx, doc, chunks, payload); err != nil {
		res.Timings.Store = time.Since(t)
		return res, fmt.Errorf("%w %s: %w", ErrStore, in.URL, err)
	}
	res.Timings.Store = time.Since(t)
	res.Outcome = Stored
	res.Document = *doc
	res.Chunks = len(chunks)
	return res, nil
}

// Retag gives an unchanged stored page the tags of the latest crawl or
// request: the tags a page is stored with are those of the crawl that last
// processed it, whether its content changed or not. When tags differ from
// prev's (as sets) it writes them (store.SetDocumentTags: no chunking or
// embedding; the change feed tells search) and returns the stored document
// and a detail saying what changed; otherwise prev and "".
func (p *Pipeline) Retag(ctx context.Context, prev *store.Document, tags []string) (store.Document, string, error) {
	if sameTags(prev.Tags, tags) {
		return *prev, "", nil
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	doc, err := p.st.SetDocumentTags(wctx, prev.ID, tags)
	if err != nil {
		return *prev, "", fmt.Errorf("%w %s (tags): %w", ErrStore, prev.URL, err)
	}
	return doc, fmt.Sprintf("content unchanged; tags %s replaced by %s", tagList(prev.Tags), tagList(tags)), nil
}

// sameTags reports whether a and b hold the same tags, in any order.
func sameTags(a, b []string) bool {
	as, bs := slices.Clone(a), slices.Clone(b)
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(slices.Compact(as), slices.Compact(bs))
}

func tagList(tags []string) string {
	if len(tags) == 0 {
		return "[]"
	}
	return "[" + strings.Join(tags, ", ") + "]"
}

// scriptShell returns what shows that an HTML page with (next to) no text
// is a shell that scripts fill in the browser, nil when it is not one. A
// placeholder such as "Loading ..." is all the text such a page has: it is
// not indexed either.
func scriptShell(in Page) *htmltext.Shell {
	page := in.Extracted
	if len(in.Body) == 0 || page.Extractor == htmltext.ExtractorPlain || len(strings.TrimSpace(page.Text)) > htmltext.ShellMaxText {
		return nil
	}
	return htmltext.DetectShell(in.Body, in.ContentType)
}

// ErrChanged is returned by KGPayload when the page no longer matches its stored
// version.
var ErrChanged = errors.New("page changed since it was stored")

// KGPayload rebuilds the kg payload the crawl sent for a page that is still the
// stored version (same content hash, same number of chunks), without embedding or
// storing anything: the same chunks, chunk ids, code spans and links. It lets the
// graph be rebuilt with a newer extractor (package regraph). A page that changed
// gives an error wrapping ErrChanged: a recrawl must store it first.
func (p *Pipeline) KGPayload(in Page) (kgapi.Document, error) {
	if in.Previous == nil {
		return kgapi.Document{}, fmt.Errorf("kg payload of %s: no stored version", in.URL)
	}
	if h := p.ContentHash(in.Extracted); h != in.Previous.ContentHash {
		return kgapi.Document{}, fmt.Errorf("kg payload of %s: content hash differs from the stored one: %w", in.URL, ErrChanged)
	}
	pieces, err := p.splitter.Split(in.Extracted)
	if err != nil {
		return kgapi.Document{}, fmt.Errorf("chunk %s: %w", in.URL, err)
	}
	if len(pieces) != in.Previous.ChunkCount {
		return kgapi.Document{}, fmt.Errorf("kg payload of %s: %d chunks, %d stored: %w", in.URL, len(pieces), in.Previous.ChunkCount, ErrChanged)
	}
	return p.kgDocument(in.URL, in.Previous, in.Extracted, pieces), nil
}

// embedText is what the model sees for a chunk: the page title and heading
// path give a chunk the context its own words may lack.
func embedText(title string, pc Piece) string {
	var b strings.Builder
	path := pc.HeadingPath
	if title != "" && (len(path) == 0 || path[0] != title) {
		b.WriteString(title)
		if len(path) > 0 {
			b.WriteString(" > ")
		}
	}
	b.WriteString(strings.Join(path, " > "))
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(pc.Text)
	return b.String()
}

// kgDocument is the outbox payload: what the kg service ingests.
func (p *Pipeline) kgDocument(canonicalURL string, doc *store.Document, page *htmltext.Page, pieces []Piece) kgapi.Document {
	id := store.DocumentID(canonicalURL)
	out := kgapi.Document{ID: id, URL: canonicalURL, Title: doc.Title, Headings: doc.Headings}
	for i, pc := range pieces {
		c := kgapi.Chunk{
			ID:          strconv.FormatInt(store.ChunkID(id, i), 10),
			Ordinal:     i,
			Text:        pc.Text,
			HeadingPath: pc.HeadingPath,
		}
		for _, code := range page.Code {
			if strings.Contains(pc.Text, code) {
				c.CodeSpans = append(c.CodeSpans, code)
			}
		}
		out.Chunks = append(out.Chunks, c)
	}
	for _, l := range page.Links {
		if len(out.Links) >= p.maxLinks {
			break
		}
		if len(l.URL) > canon.MaxBytes {
			// No document is stored under such a URL, and kg refuses a whole
			// document for one link over its limit: the outbox would retry it forever.
			continue
		}
		out.Links = append(out.Links, kgapi.Link{URL: l.URL, Anchor: clip(l.Text, 300)})
	}
	return out
}

func firstTime(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t.UTC()
		}
	}
	return time.Time{}
}

// clip cuts s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
