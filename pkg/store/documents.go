package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kgsearch/kgsearch/pkg/docid"
)

// Document is one crawled page. Its ID is DocumentID(URL).
type Document struct {
	ID           string
	URL          string // canonical URL
	Domain       string // lower-case host; derived from URL when empty
	Title        string
	Lang         string
	ContentHash  string // hash of the extracted text, to skip unchanged pages
	ETag         string // HTTP ETag, for conditional recrawl
	LastModified string // HTTP Last-Modified, verbatim
	PublishedAt  time.Time
	FetchedAt    time.Time
	CreatedAt    time.Time // set by the store
	UpdatedAt    time.Time // set by the store
	Tags         []string
	Headings     []string
	ChunkCount   int // set by the store
}

// Chunk is a piece of a document's extracted text with its embedding.
type Chunk struct {
	ID          int64 // ChunkID(DocumentID, Ordinal); set by the store
	DocumentID  string
	Ordinal     int // position in the document; set by the store from the slice order
	Text        string
	TokenCount  int
	StartOffset int // byte offsets into the extracted text
	EndOffset   int
	HeadingPath []string
	Embedding   []float32
}

// Op is a change operation.
type Op string

// Change operations.
const (
	OpInsert Op = "insert"
	OpUpdate Op = "update"
	OpDelete Op = "delete"
)

// Change is one entry of the change feed.
type Change struct {
	Seq        int64
	DocumentID string
	Op         Op
	At         time.Time
}

// Outbox kinds written by UpsertDocument and DeleteDocument.
const (
	OutboxUpsert = "upsert"
	OutboxDelete = "delete"
)

// MaxURLBytes is the longest document URL (the documents.url column): the crawler
// refuses to queue a longer one (services/crawler/internal/canon).
const MaxURLBytes = 2048

// Limits on document fields (columns are sized to them).
const (
	maxDomainLen  = 253
	maxTags       = 64
	maxTagLen     = 128
	maxChunks     = 100000
	maxTitleLen   = 65535   // TEXT
	maxChunkText  = 1 << 22 // 4 MiB; MEDIUMTEXT holds 16 MiB
	chunkBatchMax = 200     // rows per multi-row INSERT
	// chunkBatchBytes cuts a multi-row INSERT early so a statement stays far below
	// max_allowed_packet (64 MiB in deploy/local/mariadb.sh, 16 MiB by default).
	chunkBatchBytes = 4 << 20
)

// DocumentID is the stable id of a canonical URL, docid.FromURL (the repository's
// one definition, shared with the kg service).
func DocumentID(canonicalURL string) string { return docid.FromURL(canonicalURL) }

// URLHash is the frontier's dedup key of a canonical URL (the same function as DocumentID).
func URLHash(canonicalURL string) string { return DocumentID(canonicalURL) }

// ChunkID is the stable id of a document's chunk: 63 bits of SHA-256(documentID, ordinal).
// Re-upserting a document gives its chunks the same ids, so derived indexes update in place.
func ChunkID(documentID string, ordinal int) int64 {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(ordinal))
	h := sha256.New()
	h.Write([]byte(documentID))
	h.Write(b[:])
	sum := h.Sum(nil)
	return int64(binary.BigEndian.Uint64(sum[:8]) &^ (1 << 63))
}

// UpsertResult says what UpsertDocument did.
type UpsertResult struct {
	Op       Op    // OpInsert or OpUpdate
	Seq      int64 // change sequence number
	ChunkIDs []int64
}

func checkTags(tags []string) error {
	if len(tags) > maxTags {
		return invalid("document tags", "%d tags, at most %d", len(tags), maxTags)
	}
	for _, t := range tags {
		if t == "" || len(t) > maxTagLen {
			return invalid("document tags", "tag %q must be 1..%d bytes", t, maxTagLen)
		}
	}
	return nil
}

func (s *Store) prepareDocument(doc *Document, chunks []Chunk, m Model) error {
	if doc.URL == "" {
		return invalid("document URL", "empty")
	}
	if len(doc.URL) > MaxURLBytes {
		return invalid("document URL", "%d bytes, longer than %d", len(doc.URL), MaxURLBytes)
	}
	u, err := url.Parse(doc.URL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return invalid("document URL", "%q is not an absolute http(s) URL", doc.URL)
	}
	id := DocumentID(doc.URL)
	if doc.ID != "" && doc.ID != id {
		return invalid("document ID", "%q is not DocumentID(URL) = %q; leave it empty", doc.ID, id)
	}
	doc.ID = id
	if doc.Domain == "" {
		doc.Domain = strings.ToLower(u.Hostname())
	}
	if len(doc.Domain) > maxDomainLen {
		return invalid("document domain", "longer than %d bytes", maxDomainLen)
	}
	if err := checkTags(doc.Tags); err != nil {
		return err
	}
	if len(doc.Title) > maxTitleLen || !utf8.ValidString(doc.Title) {
		return invalid("document title", "must be valid UTF-8 of at most %d bytes", maxTitleLen)
	}
	if len(doc.Lang) > 16 {
		return invalid("document lang", "%q longer than 16 bytes", doc.Lang)
	}
	if len(doc.ContentHash) > 128 || len(doc.ETag) > 512 || len(doc.LastModified) > 64 {
		return invalid("document", "content hash (128), ETag (512) or Last-Modified (64) too long")
	}
	if len(chunks) > maxChunks {
		return invalid("chunks", "%d chunks, at most %d", len(chunks), maxChunks)
	}
	for i := range chunks {
		c := &chunks[i]
		what := fmt.Sprintf("chunk %d", i)
		if err := checkVector(m, c.Embedding, what); err != nil {
			return err
		}
		if c.StartOffset < 0 || c.EndOffset < c.StartOffset {
			return invalid(what+" offsets", "start %d, end %d", c.StartOffset, c.EndOffset)
		}
		if !utf8.ValidString(c.Text) {
			return invalid(what+" text", "not valid UTF-8")
		}
		if len(c.Text) > maxChunkText {
			return invalid(what+" text", "%d bytes, at most %d", len(c.Text), maxChunkText)
		}
		if c.TokenCount < 0 {
			return invalid(what+" token count", "%d", c.TokenCount)
		}
		c.DocumentID = id
		c.Ordinal = i
		c.ID = ChunkID(id, i)
	}
	return nil
}

// UpsertDocument stores doc and replaces its chunks in one transaction, records a
// change (insert or update) and, when outboxPayload is not nil, enqueues an outbox
// row of kind OutboxUpsert carrying it (superseding undelivered rows of the same
// document). On any error the previous version of the document stays intact.
// Chunk ids, ordinals and the document id are filled in on doc and chunks.
func (s *Store) UpsertDocument(ctx context.Context, doc *Document, chunks []Chunk, outboxPayload json.RawMessage) (UpsertResult, error) {
	m, err := s.Model(ctx)
	if err != nil {
		return UpsertResult{}, fmt.Errorf("upsert document %s: %w", doc.URL, err)
	}
	if err := s.prepareDocument(doc, chunks, m); err != nil {
		return UpsertResult{}, fmt.Errorf("upsert document %s: %w", doc.URL, err)
	}
	if outboxPayload != nil && !json.Valid(outboxPayload) {
		return UpsertResult{}, fmt.Errorf("upsert document %s: %w", doc.URL, invalid("outbox payload", "not valid JSON"))
	}
	tags, _ := json.Marshal(nonNil(doc.Tags))
	headings, _ := json.Marshal(nonNil(doc.Headings))

	var res UpsertResult
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var exists int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM documents WHERE id = ? FOR UPDATE", doc.ID).Scan(&exists)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			res.Op = OpInsert
		case err != nil:
			return fmt.Errorf("lock document: %w", err)
		default:
			res.Op = OpUpdate
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO documents
			(id, url, domain, title, lang, content_hash, etag, last_modified, published_at, fetched_at,
			 created_at, updated_at, tags, headings, chunk_count)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6), ?, ?, ?)
			ON DUPLICATE KEY UPDATE url = VALUES(url), domain = VALUES(domain), title = VALUES(title),
			 lang = VALUES(lang), content_hash = VALUES(content_hash), etag = VALUES(etag),
			 last_modified = VALUES(last_modified), published_at = VALUES(published_at),
			 fetched_at = VALUES(fetched_at), updated_at = VALUES(updated_at), tags = VALUES(tags),
			 headings = VALUES(headings), chunk_count = VALUES(chunk_count)`,
			doc.ID, doc.URL, doc.Domain, doc.Title, doc.Lang, doc.ContentHash, doc.ETag, doc.LastModified,
			nullTime(doc.PublishedAt), nullTime(doc.FetchedAt), string(tags), string(headings), len(chunks))
		if err != nil {
			return fmt.Errorf("write document row: %w", err)
		}
		if res.Op == OpUpdate {
			if _, err := tx.ExecContext(ctx, "DELETE FROM chunks WHERE document_id = ?", doc.ID); err != nil {
				return fmt.Errorf("delete old chunks: %w", err)
			}
		}
		if err := s.hook("upsert:after-delete-chunks"); err != nil {
			return err
		}
		if err := s.insertChunks(ctx, tx, chunks); err != nil {
			return err
		}
		if err := s.hook("upsert:after-insert-chunks"); err != nil {
			return err
		}
		if outboxPayload != nil {
			if err := enqueueOutbox(ctx, tx, OutboxUpsert, doc.ID, outboxPayload); err != nil {
				return err
			}
		}
		res.Seq, err = recordChange(ctx, tx, doc.ID, res.Op)
		return err
	})
	if err != nil {
		return UpsertResult{}, fmt.Errorf("upsert document %s: %w", doc.ID, err)
	}
	res.ChunkIDs = make([]int64, len(chunks))
	for i := range chunks {
		res.ChunkIDs[i] = chunks[i].ID
	}
	doc.ChunkCount = len(chunks)
	return res, nil
}

// SetDocumentTags replaces the tags of a stored document without touching its
// content or chunks, and records an update change so that the indexes derived
// from the change feed (search's Bleve index and tag filters) re-read the
// document. kg holds no tags: no outbox row is written. It returns the
// document as stored afterwards; unknown ids give ErrNotFound.
func (s *Store) SetDocumentTags(ctx context.Context, id string, tags []string) (Document, error) {
	if err := checkTags(tags); err != nil {
		return Document{}, fmt.Errorf("set tags of document %s: %w", id, err)
	}
	if !isASCII(id) {
		return Document{}, fmt.Errorf("set tags of document %s: %w", id, ErrNotFound)
	}
	raw, _ := json.Marshal(nonNil(tags))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		r, err := tx.ExecContext(ctx, "UPDATE documents SET tags = ?, updated_at = UTC_TIMESTAMP(6) WHERE id = ?", string(raw), id)
		if err != nil {
			return fmt.Errorf("write tags: %w", err)
		}
		if n, _ := r.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		_, err = recordChange(ctx, tx, id, OpUpdate)
		return err
	})
	if err != nil {
		return Document{}, fmt.Errorf("set tags of document %s: %w", id, err)
	}
	return s.GetDocument(ctx, id)
}

func (s *Store) insertChunks(ctx context.Context, tx *sql.Tx, chunks []Chunk) error {
	for start := 0; start < len(chunks); {
		end, size := start, 0
		for end < len(chunks) && end-start < chunkBatchMax && (end == start || size+chunkSize(chunks[end]) <= chunkBatchBytes) {
			size += chunkSize(chunks[end])
			end++
		}
		batch := chunks[start:end]
		var q strings.Builder
		q.WriteString(`INSERT INTO chunks (id, document_id, ordinal, text, token_count, start_offset, end_offset, heading_path, embedding) VALUES `)
		args := make([]any, 0, 9*len(batch))
		for i, c := range batch {
			if i > 0 {
				q.WriteByte(',')
			}
			// A bound []byte arrives as a character string, which a VECTOR column
			// refuses; the cast makes it binary.
			q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS BINARY))")
			hp, _ := json.Marshal(nonNil(c.HeadingPath))
			args = append(args, c.ID, c.DocumentID, c.Ordinal, c.Text, c.TokenCount, c.StartOffset, c.EndOffset,
				string(hp), EncodeVector(c.Embedding))
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("insert chunks %d..%d: %w", start, end-1, err)
		}
		if err := s.hook(fmt.Sprintf("upsert:after-chunk-batch:%d", start)); err != nil {
			return err
		}
		start = end
	}
	return nil
}

func chunkSize(c Chunk) int {
	n := len(c.Text) + 4*len(c.Embedding) + 64
	for _, h := range c.HeadingPath {
		n += len(h) + 3
	}
	return n
}

// recordChange takes the next change sequence number under the counter's row lock
// (held until commit, so commit order is sequence order) and writes the change.
func recordChange(ctx context.Context, tx *sql.Tx, docID string, op Op) (int64, error) {
	r, err := tx.ExecContext(ctx, "UPDATE change_counter SET seq = LAST_INSERT_ID(seq + 1) WHERE id = 1")
	if err != nil {
		return 0, fmt.Errorf("next change seq: %w", err)
	}
	seq, err := r.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("next change seq: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO changes (seq, document_id, op, at) VALUES (?, ?, ?, UTC_TIMESTAMP(6))",
		seq, docID, string(op)); err != nil {
		return 0, fmt.Errorf("record change: %w", err)
	}
	return seq, nil
}

// DeletePayload is the outbox payload of an OutboxDelete row: the document kg
// must drop, and its URL when the deleter knew it (for logs and tools).
type DeletePayload struct {
	ID  string `json:"id"`
	URL string `json:"url,omitempty"`
}

// DeletePayload decodes the payload of an OutboxDelete row. Rows written
// without one (or before it was typed) give the row's document id.
func (it OutboxItem) DeletePayload() (DeletePayload, error) {
	p := DeletePayload{ID: it.DocumentID}
	if len(it.Payload) > 0 {
		if err := json.Unmarshal(it.Payload, &p); err != nil {
			return p, fmt.Errorf("decode delete payload of outbox row %d: %w", it.ID, err)
		}
	}
	if p.ID == "" {
		p.ID = it.DocumentID
	}
	return p, nil
}

// DeleteDocument removes a document and its chunks, records a delete change and
// enqueues an OutboxDelete row with the payload (nil: the id alone). Unknown ids
// give ErrNotFound.
func (s *Store) DeleteDocument(ctx context.Context, id string, del *DeletePayload) (int64, error) {
	return s.deleteDocument(ctx, id, del, nil, nil)
}

// DeleteDocumentInJob is DeleteDocument for a crawl job that removes a
// document it did not reach (prune): in the same transaction it records the
// document's URL in the job's frontier as done with reason, so that the job
// counts the removal, and a job resumed after a crash finds each document
// either still stored and not recorded, or removed and recorded. A document
// fetched or updated since the job started (by another job or a single page,
// after the caller chose it) is kept: ErrWrittenSince, checked under the
// document's row lock.
func (s *Store) DeleteDocumentInJob(ctx context.Context, id string, del *DeletePayload, jobID, reason string) (int64, error) {
	if del == nil || del.URL == "" || DocumentID(del.URL) != id {
		return 0, fmt.Errorf("delete document %s: %w", id, invalid("payload url", "want the document's canonical URL"))
	}
	unwritten := func(tx *sql.Tx) error {
		var old int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM documents d JOIN crawl_jobs j ON j.id = ?
			WHERE d.id = ? AND j.started_at IS NOT NULL
			AND (d.fetched_at IS NULL OR d.fetched_at < j.started_at) AND d.updated_at < j.started_at`, jobID, id).Scan(&old)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrWrittenSince
		}
		return err
	}
	return s.deleteDocument(ctx, id, del, unwritten, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO crawl_frontier (job_id, url_hash, url, depth, state, reason, created_at, updated_at)
			VALUES (?, ?, ?, 0, 'done', ?, UTC_TIMESTAMP(6), UTC_TIMESTAMP(6))`, jobID, id, del.URL, truncate(reason, 512)); err != nil {
			return fmt.Errorf("record in the frontier of job %s: %w", jobID, err)
		}
		return s.hook("delete-in-job:after-frontier")
	})
}

// deleteDocument removes the document in one transaction; check, when not nil,
// runs once the document's row is locked and may refuse the removal, also runs
// last.
func (s *Store) deleteDocument(ctx context.Context, id string, del *DeletePayload, check, also func(*sql.Tx) error) (int64, error) {
	if !isASCII(id) {
		return 0, fmt.Errorf("delete document %s: %w", id, ErrNotFound)
	}
	p := DeletePayload{ID: id}
	if del != nil {
		if del.ID != "" && del.ID != id {
			return 0, fmt.Errorf("delete document %s: %w", id, invalid("payload id", "%q is not the deleted document", del.ID))
		}
		p.URL = del.URL
	}
	outboxPayload, err := json.Marshal(p)
	if err != nil {
		return 0, fmt.Errorf("delete document %s: %w", id, err)
	}
	var seq int64
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		var exists int
		err := tx.QueryRowContext(ctx, "SELECT 1 FROM documents WHERE id = ? FOR UPDATE", id).Scan(&exists)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock document: %w", err)
		}
		if check != nil {
			if err := check(tx); err != nil {
				return err
			}
		}
		// Chunks are deleted through SQL rather than an InnoDB ON DELETE CASCADE:
		// MariaDB maintains the vector index at the SQL layer, which cascades bypass.
		if _, err := s.Model(ctx); err == nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM chunks WHERE document_id = ?", id); err != nil {
				return fmt.Errorf("delete chunks: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM documents WHERE id = ?", id); err != nil {
			return fmt.Errorf("delete document row: %w", err)
		}
		if err := enqueueOutbox(ctx, tx, OutboxDelete, id, outboxPayload); err != nil {
			return err
		}
		if seq, err = recordChange(ctx, tx, id, OpDelete); err != nil {
			return err
		}
		if also != nil {
			return also(tx)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("delete document %s: %w", id, err)
	}
	return seq, nil
}

const documentColumns = `id, url, domain, title, lang, content_hash, etag, last_modified, published_at,
	fetched_at, created_at, updated_at, tags, headings, chunk_count`

type scanner interface{ Scan(dest ...any) error }

func scanDocument(r scanner) (Document, error) {
	var d Document
	var published, fetched sql.NullTime
	var tags, headings []byte
	if err := r.Scan(&d.ID, &d.URL, &d.Domain, &d.Title, &d.Lang, &d.ContentHash, &d.ETag, &d.LastModified,
		&published, &fetched, &d.CreatedAt, &d.UpdatedAt, &tags, &headings, &d.ChunkCount); err != nil {
		return d, err
	}
	d.PublishedAt, d.FetchedAt = published.Time, fetched.Time
	if err := json.Unmarshal(tags, &d.Tags); err != nil {
		return d, fmt.Errorf("document %s tags: %w", d.ID, err)
	}
	if err := json.Unmarshal(headings, &d.Headings); err != nil {
		return d, fmt.Errorf("document %s headings: %w", d.ID, err)
	}
	return d, nil
}

// GetDocument returns the document with the id, or ErrNotFound.
func (s *Store) GetDocument(ctx context.Context, id string) (Document, error) {
	if !isASCII(id) {
		return Document{}, fmt.Errorf("get document %s: %w", id, ErrNotFound)
	}
	d, err := scanDocument(s.db.QueryRowContext(ctx, "SELECT "+documentColumns+" FROM documents WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return Document{}, fmt.Errorf("get document %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Document{}, fmt.Errorf("get document %s: %w", id, err)
	}
	return d, nil
}

// DocumentByURL returns the document of a canonical URL (for conditional recrawl:
// ContentHash, ETag, LastModified), or ErrNotFound.
func (s *Store) DocumentByURL(ctx context.Context, canonicalURL string) (Document, error) {
	return s.GetDocument(ctx, DocumentID(canonicalURL))
}

// ListOptions pages through documents ordered by id.
type ListOptions struct {
	After  string // return documents with id > After (the previous page's NextAfter)
	Limit  int    // 1..1000, default 100
	Domain string // optional exact domain
}

// DocumentPage is one page of ListDocuments.
type DocumentPage struct {
	Documents []Document
	NextAfter string // empty on the last page
}

// ListDocuments returns documents in id order, keyset-paged.
func (s *Store) ListDocuments(ctx context.Context, o ListOptions) (DocumentPage, error) {
	if o.Limit == 0 {
		o.Limit = 100
	}
	if o.Limit < 1 || o.Limit > 1000 {
		return DocumentPage{}, fmt.Errorf("list documents: %w", invalid("limit", "%d is outside 1..1000", o.Limit))
	}
	if !isASCII(o.After) {
		return DocumentPage{}, fmt.Errorf("list documents: %w", invalid("after", "not a document id; pass the next_after of the previous page"))
	}
	if !isASCII(o.Domain) {
		return DocumentPage{}, fmt.Errorf("list documents: %w", invalid("domain", "not an ASCII host name; use the punycode (xn--) form"))
	}
	q := "SELECT " + documentColumns + " FROM documents WHERE id > ?"
	args := []any{o.After}
	if o.Domain != "" {
		q += " AND domain = ?"
		args = append(args, o.Domain)
	}
	q += " ORDER BY id LIMIT ?"
	args = append(args, o.Limit+1)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return DocumentPage{}, fmt.Errorf("list documents: %w", err)
	}
	defer rows.Close()
	var page DocumentPage
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return DocumentPage{}, fmt.Errorf("list documents: %w", err)
		}
		page.Documents = append(page.Documents, d)
	}
	if err := rows.Err(); err != nil {
		return DocumentPage{}, fmt.Errorf("list documents: %w", err)
	}
	if len(page.Documents) > o.Limit {
		page.Documents = page.Documents[:o.Limit]
		page.NextAfter = page.Documents[o.Limit-1].ID
	}
	return page, nil
}

const chunkColumns = "c.id, c.document_id, c.ordinal, c.text, c.token_count, c.start_offset, c.end_offset, c.heading_path, c.embedding"

func scanChunk(r scanner, extra ...any) (Chunk, error) {
	var c Chunk
	var hp, emb []byte
	dest := append([]any{&c.ID, &c.DocumentID, &c.Ordinal, &c.Text, &c.TokenCount, &c.StartOffset, &c.EndOffset, &hp, &emb}, extra...)
	if err := r.Scan(dest...); err != nil {
		return c, err
	}
	if err := json.Unmarshal(hp, &c.HeadingPath); err != nil {
		return c, fmt.Errorf("chunk %d heading path: %w", c.ID, err)
	}
	v, err := DecodeVector(emb)
	if err != nil {
		return c, fmt.Errorf("chunk %d: %w", c.ID, err)
	}
	c.Embedding = v
	return c, nil
}

func (s *Store) queryChunks(ctx context.Context, q string, args ...any) ([]Chunk, error) {
	if _, err := s.Model(ctx); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Chunk
	for rows.Next() {
		c, err := scanChunk(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// DocumentChunks returns a document's chunks in ordinal order (empty if none).
func (s *Store) DocumentChunks(ctx context.Context, documentID string) ([]Chunk, error) {
	out, err := s.queryChunks(ctx, "SELECT "+chunkColumns+" FROM chunks c WHERE c.document_id = ? ORDER BY c.ordinal", documentID)
	if err != nil {
		return nil, fmt.Errorf("chunks of document %s: %w", documentID, err)
	}
	return out, nil
}

// ChunksByIDs returns the chunks with the given ids, in the order of ids; unknown ids
// are left out.
func (s *Store) ChunksByIDs(ctx context.Context, ids []int64) ([]Chunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if len(ids) > 10000 {
		return nil, fmt.Errorf("chunks by ids: %w", invalid("ids", "%d ids, at most 10000", len(ids)))
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	q := "SELECT " + chunkColumns + " FROM chunks c WHERE c.id IN (" + placeholders(len(ids)) + ")"
	got, err := s.queryChunks(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("chunks by ids: %w", err)
	}
	byID := make(map[int64]Chunk, len(got))
	for _, c := range got {
		byID[c.ID] = c
	}
	out := make([]Chunk, 0, len(got))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
			delete(byID, id) // a repeated id is returned once
		}
	}
	return out, nil
}

// Changes returns up to limit changes with seq > since, in seq order. A tailer
// stores the last Seq it applied and passes it as since.
func (s *Store) Changes(ctx context.Context, since int64, limit int) ([]Change, error) {
	if limit < 1 || limit > 10000 {
		return nil, fmt.Errorf("changes: %w", invalid("limit", "%d is outside 1..10000", limit))
	}
	rows, err := s.db.QueryContext(ctx, "SELECT seq, document_id, op, at FROM changes WHERE seq > ? ORDER BY seq LIMIT ?", since, limit)
	if err != nil {
		return nil, fmt.Errorf("changes since %d: %w", since, err)
	}
	defer rows.Close()
	var out []Change
	for rows.Next() {
		var c Change
		var op string
		if err := rows.Scan(&c.Seq, &c.DocumentID, &op, &c.At); err != nil {
			return nil, fmt.Errorf("changes since %d: %w", since, err)
		}
		c.Op = Op(op)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changes since %d: %w", since, err)
	}
	return out, nil
}

// LatestSeq returns the newest committed change sequence number (0 when none).
// Take it before a full rebuild from ListDocuments, then tail Changes from it.
func (s *Store) LatestSeq(ctx context.Context) (int64, error) {
	var seq int64
	if err := s.db.QueryRowContext(ctx, "SELECT seq FROM change_counter WHERE id = 1").Scan(&seq); err != nil {
		return 0, fmt.Errorf("latest change seq: %w", err)
	}
	return seq, nil
}

// PruneChanges deletes changes with seq <= upTo (once every tailer has passed it).
func (s *Store) PruneChanges(ctx context.Context, upTo int64) (int64, error) {
	r, err := s.db.ExecContext(ctx, "DELETE FROM changes WHERE seq <= ?", upTo)
	if err != nil {
		return 0, fmt.Errorf("prune changes up to %d: %w", upTo, err)
	}
	n, _ := r.RowsAffected()
	return n, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
