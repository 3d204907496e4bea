package pipeline

import (
	"container/list"
	"sync"
)

// queryVectors is a small LRU of recent query vectors, in front of the embedder:
// people repeat queries (paging, refining filters, popular questions), and a query
// embedding costs ~5 ms of CPU with the real model while a hit costs a map lookup.
// The key is the embedder's model and dimensions with the normalised query text, so
// vectors of another model are never reused. The cached slices are shared and must
// not be modified (the pipeline only reads the query vector).
type queryVectors struct {
	size int

	mu    sync.Mutex
	order *list.List // front: most recently used; values are *qvEntry
	byKey map[string]*list.Element
}

type qvEntry struct {
	key string
	vec []float32
}

func newQueryVectors(size int) *queryVectors {
	return &queryVectors{size: size, order: list.New(), byKey: make(map[string]*list.Element, size)}
}

// get returns the vector cached for key.
func (c *queryVectors) get(key string) ([]float32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*qvEntry).vec, true
}

// put caches a copy of vec under key, evicting the least recently used entry when full.
func (c *queryVectors) put(key string, vec []float32) {
	v := make([]float32, len(vec))
	copy(v, vec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		el.Value.(*qvEntry).vec = v
		c.order.MoveToFront(el)
		return
	}
	c.byKey[key] = c.order.PushFront(&qvEntry{key: key, vec: v})
	if c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.byKey, last.Value.(*qvEntry).key)
	}
}

// len is the number of cached vectors.
func (c *queryVectors) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
