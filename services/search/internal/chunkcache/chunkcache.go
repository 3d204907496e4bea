// Package chunkcache keeps recently hydrated chunk rows (text, offsets, heading path,
// embedding) in the search process, so a search reads from MariaDB only the
// candidates it has not seen lately. It follows the same change feed as the BM25
// index: the indexer calls Forget for the document of every change it reads, before
// it reads the document, and Clear after a rebuild of the index.
//
// A chunk's id is a hash of its document and ordinal, so an updated document reuses
// ids with new content: what makes the cache correct is that every write to a
// document's chunks commits a change row in the same transaction (pkg/store), and
// that a row read from the store is not kept if the cache was invalidated while it
// was being read (a generation counter): a read that raced a write and got the old
// rows cannot put them back after Forget dropped them. Between a write's commit and
// the indexer reading its change (the index lag, about SEARCH_SYNC_INTERVAL), a
// cached row may still show the document's previous text, as the BM25 index and the
// document table show its previous state for that long.
package chunkcache

import (
	"container/list"
	"context"
	"slices"
	"sync"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// Source reads chunk rows (*store.Store): in the order of ids, each at most once,
// leaving out ids that do not exist.
type Source interface {
	ChunksByIDs(ctx context.Context, ids []int64) ([]store.Chunk, error)
}

// Cache is an LRU of chunk rows in front of a Source. Safe for concurrent use. The
// rows it returns are shared: callers must not modify them (or their slices).
type Cache struct {
	src Source
	max int

	mu    sync.Mutex
	gen   uint64 // incremented by every invalidation
	rows  map[int64]*list.Element
	byDoc map[string]map[int64]struct{}
	lru   list.List // of store.Chunk, most recently used first

	hits, misses uint64
}

// New returns a cache of at most size rows in front of src (size >= 1).
func New(src Source, size int) *Cache {
	return &Cache{src: src, max: size, rows: map[int64]*list.Element{}, byDoc: map[string]map[int64]struct{}{}}
}

// ChunksByIDs returns the rows of ids in their order, each at most once, leaving out
// ids that do not exist; rows not cached are read from the source in one call and
// kept. On a source error it returns the rows it has and the error.
func (c *Cache) ChunksByIDs(ctx context.Context, ids []int64) ([]store.Chunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found := make(map[int64]store.Chunk, len(ids))
	var missing []int64
	c.mu.Lock()
	gen := c.gen
	for _, id := range ids {
		if _, dup := found[id]; dup {
			continue
		}
		if el, ok := c.rows[id]; ok {
			c.lru.MoveToFront(el)
			found[id] = el.Value.(store.Chunk)
			continue
		}
		if !slices.Contains(missing, id) {
			missing = append(missing, id)
		}
	}
	c.hits += uint64(len(found))
	c.misses += uint64(len(missing))
	c.mu.Unlock()

	var err error
	if len(missing) > 0 {
		var got []store.Chunk
		got, err = c.src.ChunksByIDs(ctx, missing)
		for _, ch := range got {
			found[ch.ID] = ch
		}
		c.keep(gen, got)
	}
	out := make([]store.Chunk, 0, len(found))
	for _, id := range ids {
		if ch, ok := found[id]; ok {
			out = append(out, ch)
			delete(found, id) // a repeated id is returned once
		}
	}
	return out, err
}

// keep adds rows read under generation gen, unless the cache was invalidated since.
func (c *Cache) keep(gen uint64, rows []store.Chunk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return // a change arrived while they were read: they may be the old rows
	}
	for _, ch := range rows {
		if el, ok := c.rows[ch.ID]; ok {
			c.lru.MoveToFront(el)
			continue
		}
		c.rows[ch.ID] = c.lru.PushFront(ch)
		doc := c.byDoc[ch.DocumentID]
		if doc == nil {
			doc = map[int64]struct{}{}
			c.byDoc[ch.DocumentID] = doc
		}
		doc[ch.ID] = struct{}{}
	}
	for c.lru.Len() > c.max {
		c.removeLocked(c.lru.Back())
	}
}

func (c *Cache) removeLocked(el *list.Element) {
	ch := c.lru.Remove(el).(store.Chunk)
	delete(c.rows, ch.ID)
	if doc := c.byDoc[ch.DocumentID]; doc != nil {
		delete(doc, ch.ID)
		if len(doc) == 0 {
			delete(c.byDoc, ch.DocumentID)
		}
	}
}

// Forget drops the rows of a document (it changed or was deleted) and discards rows
// being read meanwhile.
func (c *Cache) Forget(documentID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for id := range c.byDoc[documentID] {
		if el, ok := c.rows[id]; ok {
			c.removeLocked(el)
		}
	}
	delete(c.byDoc, documentID)
}

// Clear drops every row (after the index was rebuilt, when changes may have been
// skipped) and discards rows being read meanwhile.
func (c *Cache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.rows = map[int64]*list.Element{}
	c.byDoc = map[string]map[int64]struct{}{}
	c.lru.Init()
}

// Stats returns the rows held and the rows served from memory and from the source
// since the start.
func (c *Cache) Stats() (rows int, hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len(), c.hits, c.misses
}

// Store is a *store.Store whose ChunksByIDs is served through a cache.
type Store struct {
	*store.Store
	cache *Cache
}

// Wrap returns st with ChunksByIDs served through c (whose source is st).
func Wrap(st *store.Store, c *Cache) Store { return Store{Store: st, cache: c} }

// ChunksByIDs reads through the cache.
func (s Store) ChunksByIDs(ctx context.Context, ids []int64) ([]store.Chunk, error) {
	return s.cache.ChunksByIDs(ctx, ids)
}
