package embedtest

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/embed"
)

func TestHash(t *testing.T) {
	h := NewHash(64)
	if got := h.Info(); got != (embed.Model{Name: ModelName, Dims: 64}) {
		t.Errorf("Info() = %+v, want %s with 64 dims", got, ModelName)
	}
	v, err := h.Embed(context.Background(), []string{"Python open file", "python OPEN file!", "flour and sugar", ""})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range v[:3] {
		var n float64
		for _, f := range x {
			n += float64(f) * float64(f)
		}
		if math.Abs(n-1) > 1e-6 {
			t.Errorf("vector %d: squared norm %v, want 1", i, n)
		}
	}
	if c := embed.Cosine(v[0], v[1]); c < 0.999 {
		t.Errorf("same words, different case: cosine %v, want 1", c)
	}
	if c := embed.Cosine(v[0], v[2]); c > 0.5 {
		t.Errorf("no shared words: cosine %v, want low", c)
	}
	for _, f := range v[3] {
		if f != 0 {
			t.Fatalf("empty text: got %v, want the zero vector", v[3])
		}
	}
	if calls, texts := h.Calls(); calls != 1 || texts != 4 {
		t.Errorf("Calls() = %d, %d; want 1, 4", calls, texts)
	}
	_ = h.Close()
	if _, err := h.Embed(context.Background(), []string{"x"}); !errors.Is(err, embed.ErrClosed) {
		t.Errorf("Embed after Close: got %v, want embed.ErrClosed", err)
	}
}
