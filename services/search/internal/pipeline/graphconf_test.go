package pipeline

import (
	"math"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/queryparse"
)

func TestMatchedConfidence(t *testing.T) {
	conf := entityConfidence([]queryparse.Entity{
		{Text: "binary search", ID: "binary-search", Confidence: 0.95},
		{Text: "sorted", ID: "sorted", Name: "sorted", Confidence: 0.7},
		{Text: "odd", ID: "odd", Confidence: math.NaN()}, // not a usable confidence: 1
	})
	tests := []struct {
		name    string
		matched []string
		want    float64
	}{
		{"sure entity", []string{"binary-search"}, 0.95},
		{"unsure entity", []string{"sorted"}, 0.7},
		{"both: mean", []string{"binary-search", "sorted"}, (0.95 + 0.7) / 2},
		{"id the parser did not name counts 1", []string{"sorted", "list"}, (0.7 + 1) / 2},
		{"bad confidence counts 1", []string{"odd"}, 1},
		{"nothing matched", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchedConfidence(conf, tt.matched); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("got %g, want %g", got, tt.want)
			}
		})
	}
}
