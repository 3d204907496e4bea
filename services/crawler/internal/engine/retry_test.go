package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// failingEmbedder fails for texts of pages whose first n calls it has not
// yet refused (per first text), then embeds with the hash embedder.
type failingEmbedder struct {
	*embedtest.Hash
	mu       sync.Mutex
	failures map[string]int // first text → failures left; -1 fails forever
	match    func(text string) int
}

func (f *failingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	key := texts[0]
	left, seen := f.failures[key]
	if !seen {
		left = f.match(key)
	}
	if left != 0 {
		if left > 0 {
			left--
		}
		f.failures[key] = left
		f.mu.Unlock()
		return nil, errors.New("model server busy")
	}
	f.failures[key] = 0
	f.mu.Unlock()
	return f.Hash.Embed(ctx, texts)
}

var _ embed.Embedder = (*failingEmbedder)(nil)

func TestPassingFailuresAreRetried(t *testing.T) {
	st := openStore(t, freshDatabase(t))
	s := wideSite(t, 3, 0) // /p/0 → /p/1, /p/2
	e := newEngine(t, st, engineOpts{})
	fe := &failingEmbedder{Hash: embedtest.NewHash(testDims), failures: map[string]int{}, match: func(text string) int {
		switch {
		case contains(text, "Number 1."):
			return 2 // fails twice, stored on the third claim
		case contains(text, "Number 2."):
			return -1 // never works
		}
		return 0
	}}
	e.pipe = pipeline.New(st, fe, sectionSplitter{}, "test")
	runEngine(t, e)
	status := waitJob(t, e, createJob(t, st, Spec{URL: s.URL + "/p/0", UseSitemap: ptr(false)}), 30*time.Second)
	if status.Counters.Stored != 2 {
		t.Errorf("stored: got %d, want 2 (/p/0 and /p/1 after two retries)", status.Counters.Stored)
	}
	if status.Counters.FailedBy[FailEmbed] != 1 {
		t.Errorf("failed_by_reason[embed]: got %v, want 1 (/p/2 after %d attempts)", status.Counters.FailedBy, maxAttempts)
	}
	if n := s.hit("/p/2"); n != maxAttempts {
		t.Errorf("fetches of /p/2: got %d, want %d", n, maxAttempts)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
