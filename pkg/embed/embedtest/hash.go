// Package embedtest has an embedder for unit tests of code that needs vectors but
// not their meaning: fast, deterministic, no model files. Its vectors only say
// which words two texts share; never use it for search. embed.New never returns it.
package embedtest

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/kgsearch/kgsearch/pkg/embed"
)

// ModelName is the name Hash reports, so stored test vectors can never be mistaken
// for a real model's.
const ModelName = "hash-for-tests-only"

// Hash maps each lowercased word to a signed bucket (feature hashing) and
// L2-normalises the counts. It implements embed.Embedder and is safe for
// concurrent use.
type Hash struct {
	dims   int
	calls  atomic.Int64
	texts  atomic.Int64
	closed atomic.Bool
}

var _ embed.Embedder = (*Hash)(nil)

// NewHash returns a Hash embedder producing dims-dimensional vectors (dims >= 1).
func NewHash(dims int) *Hash {
	if dims < 1 {
		dims = 1
	}
	return &Hash{dims: dims}
}

// Embed implements embed.Embedder.
func (h *Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if h.closed.Load() {
		return nil, embed.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h.calls.Add(1)
	h.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.vector(t)
	}
	return out, nil
}

func (h *Hash) vector(text string) []float32 {
	v := make([]float32, h.dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	for _, w := range words {
		f := fnv.New64a()
		_, _ = f.Write([]byte(w))
		s := f.Sum64()
		sign := float32(1)
		if s>>63 == 1 {
			sign = -1
		}
		v[s%uint64(h.dims)] += sign
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum > 0 {
		inv := float32(1 / math.Sqrt(sum))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

// Info implements embed.Embedder.
func (h *Hash) Info() embed.Model { return embed.Model{Name: ModelName, Dims: h.dims} }

// Close implements embed.Embedder.
func (h *Hash) Close() error {
	h.closed.Store(true)
	return nil
}

// Calls reports how many Embed calls and texts the embedder has seen, for tests
// of batching and caching.
func (h *Hash) Calls() (calls, texts int64) { return h.calls.Load(), h.texts.Load() }
