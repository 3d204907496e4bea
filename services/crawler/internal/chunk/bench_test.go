package chunk

import (
	"math/rand"
	"strings"
	"testing"
)

// largePage builds a 200 KB page shaped like reference documentation:
// sections with prose paragraphs, lists and code.
func largePage() (string, []Section) {
	r := rand.New(rand.NewSource(42))
	var b strings.Builder
	var sections []Section
	for i := 0; b.Len() < 200_000; i++ {
		start := b.Len()
		b.WriteString("Section heading number ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString("\n\n")
		for p := 0; p < 1+r.Intn(6); p++ {
			b.WriteString(words(r, 20+r.Intn(120)))
			b.WriteString("\n\n")
		}
		b.WriteString("def example(iterable):\n    for element in iterable:\n        if not element:\n            return False\n    return True\n\n")
		sections = append(sections, Section{HeadingPath: []string{"Page", "Section"}, Start: start, End: b.Len()})
	}
	return b.String(), sections
}

func BenchmarkSplit(b *testing.B) {
	s := newSplitter(b, nil)
	text, sections := largePage()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	chunks := 0
	for i := 0; i < b.N; i++ {
		cs, err := s.Split(text, sections)
		if err != nil {
			b.Fatal(err)
		}
		chunks += len(cs)
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
	b.ReportMetric(float64(chunks)/float64(b.N), "chunks/op")
}
