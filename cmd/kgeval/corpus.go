package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/store"
)

// StoredChunk is one chunk as the store holds it, with its page's URL and title: the
// text every system of the evaluation ranks (ours through the search service, the
// peers directly).
type StoredChunk struct {
	ID       string
	URL      string
	Title    string
	Headings []string
	Text     string
	Vector   []float32 // L2-normalised
}

// Corpus is the stored chunks of one dataset's corpus.
type Corpus struct {
	Tags   []string // the crawl tags that selected the documents (none = every document)
	Model  embed.Model
	Chunks []StoredChunk
	Pages  int
}

// LoadCorpus reads from MariaDB every chunk of the documents carrying all the tags
// (every document when there is none), with its embedding, in id order, and the
// name of the model the embeddings come from.
func LoadCorpus(ctx context.Context, dsn string, tags []string) (*Corpus, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("MariaDB DSN: %w", err)
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("MariaDB DSN: %w", err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	c := &Corpus{Tags: tags}
	err = db.QueryRowContext(ctx, "SELECT name, dims FROM embedding_model WHERE id = 1").Scan(&c.Model.Name, &c.Model.Dims)
	if err != nil {
		return nil, fmt.Errorf("read the store's embedding model: %w", err)
	}
	q := `SELECT c.id, d.url, d.title, c.heading_path, c.text, c.embedding
	      FROM chunks c JOIN documents d ON d.id = c.document_id`
	var args []any
	for i, t := range tags {
		if i == 0 {
			q += " WHERE "
		} else {
			q += " AND "
		}
		q += "JSON_CONTAINS(d.tags, JSON_QUOTE(?))"
		args = append(args, t)
	}
	q += " ORDER BY c.id"
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read stored chunks: %w", err)
	}
	defer rows.Close()
	pages := map[string]bool{}
	for rows.Next() {
		var (
			id      int64
			sc      StoredChunk
			hp, emb []byte
		)
		if err := rows.Scan(&id, &sc.URL, &sc.Title, &hp, &sc.Text, &emb); err != nil {
			return nil, fmt.Errorf("read stored chunk: %w", err)
		}
		sc.ID = fmt.Sprint(id)
		if err := json.Unmarshal(hp, &sc.Headings); err != nil {
			return nil, fmt.Errorf("chunk %s heading path: %w", sc.ID, err)
		}
		if sc.Vector, err = store.DecodeVector(emb); err != nil {
			return nil, fmt.Errorf("chunk %s: %w", sc.ID, err)
		}
		embed.Normalize(sc.Vector)
		pages[sc.URL] = true
		c.Chunks = append(c.Chunks, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read stored chunks: %w", err)
	}
	if len(c.Chunks) == 0 {
		if len(tags) > 0 {
			return nil, fmt.Errorf("no stored chunk of a document tagged %q: crawl the dataset first (make eval)", tags)
		}
		return nil, errors.New("no stored chunk: crawl the dataset first (make eval)")
	}
	c.Pages = len(pages)
	return c, nil
}
