package chunk

import (
	"math/rand"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
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
	cpu0 := cpuTime()
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
	reportCPU(b, cpu0)
}

// BenchmarkSplitPythonStdtypes splits the extracted text of the largest page
// of the Python manual (library/stdtypes.html, about 158 KB of text, 90
// sections); skipped when the manual is not found (KGS_PYDOC_DIR, or where
// deploy/local/pydocs.sh unpacks it).
func BenchmarkSplitPythonStdtypes(b *testing.B) {
	var body []byte
	const rel = "pydocs/root/usr/share/doc/python3.11/html"
	for _, dir := range []string{os.Getenv("KGS_PYDOC_DIR"), filepath.Join(os.Getenv("KGS_STATE"), rel), filepath.Join("..", "..", "..", "..", ".state", rel)} {
		if b2, err := os.ReadFile(filepath.Join(dir, "library", "stdtypes.html")); err == nil && dir != "" {
			body = b2
			break
		}
	}
	if body == nil {
		b.Skip("Python 3.11 HTML manual not found: run deploy/local/pydocs.sh install or set KGS_PYDOC_DIR")
	}
	u, _ := url.Parse("http://127.0.0.1:8099/library/stdtypes.html")
	page, err := htmltext.Extract(body, u, "text/html", nil)
	if err != nil {
		b.Fatal(err)
	}
	sections := make([]Section, len(page.Sections))
	for i, s := range page.Sections {
		sections[i] = Section{HeadingPath: s.HeadingPath, Start: s.Start, End: s.End}
	}
	s := newSplitter(b, nil)
	b.SetBytes(int64(len(page.Text)))
	b.ResetTimer()
	cpu0 := cpuTime()
	chunks := 0
	for i := 0; i < b.N; i++ {
		cs, err := s.Split(page.Text, sections)
		if err != nil {
			b.Fatal(err)
		}
		chunks += len(cs)
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
	b.ReportMetric(float64(chunks)/float64(b.N), "chunks/op")
	reportCPU(b, cpu0)
}
