package extract

import (
	"strings"
	"testing"
)

// evalDocuments turns the evaluation set into documents for benchmarks.
func evalDocuments(b *testing.B) ([]Document, int) {
	set := loadEval(b, "eval.json")
	var docs []Document
	chunks := 0
	for _, d := range set.Documents {
		doc := Document{ID: d.ID, Title: d.Title, URL: d.URL}
		for _, c := range d.Chunks {
			doc.Chunks = append(doc.Chunks, Chunk{ID: c.ID, Text: c.Text, HeadingPath: c.HeadingPath})
			chunks++
		}
		docs = append(docs, doc)
	}
	return docs, chunks
}

// BenchmarkDocument extracts the 38 chunks of the evaluation set per iteration
// and reports chunks per second.
func BenchmarkDocument(b *testing.B) {
	x, err := New()
	if err != nil {
		b.Fatal(err)
	}
	docs, chunks := evalDocuments(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, d := range docs {
			x.Document(d)
		}
	}
	b.ReportMetric(float64(chunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkDocumentLearner is BenchmarkDocument with a Learner attached.
func BenchmarkDocumentLearner(b *testing.B) {
	l := NewLearner(LearnerConfig{})
	x, err := New(WithLearner(l))
	if err != nil {
		b.Fatal(err)
	}
	docs, chunks := evalDocuments(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, d := range docs {
			x.Document(d)
		}
	}
	b.ReportMetric(float64(chunks*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkDocumentLargeChunk extracts one 100 KB chunk.
func BenchmarkDocumentLargeChunk(b *testing.B) {
	x, err := New()
	if err != nil {
		b.Fatal(err)
	}
	docs, _ := evalDocuments(b)
	var sb strings.Builder
	for sb.Len() < 100_000 {
		for _, d := range docs {
			for _, c := range d.Chunks {
				sb.WriteString(c.Text)
				sb.WriteString("\n\n")
			}
		}
	}
	doc := Document{ID: "big", Chunks: []Chunk{{ID: "c", Text: sb.String()}}}
	b.SetBytes(int64(sb.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		x.Document(doc)
	}
}

var benchQueries = []string{
	"postgres wal tuning",
	"how to use asyncio.gather with python 3.11",
	"kubernetes helm chart values.yaml",
	"What is the Global Interpreter Lock (GIL)?",
	"json.dumps() raises ValueError on NaN",
	"set PYTHONPATH on windows",
	"compare HTTP/2 and HTTP/3 over QUIC",
	"best vector database for HNSW search",
	"pip install requests ssl certificate error",
	"django orm postgresql jsonb index",
}

// BenchmarkQuery parses typical search queries (one query per iteration).
func BenchmarkQuery(b *testing.B) {
	x, err := New()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		x.Query(benchQueries[i%len(benchQueries)])
		i++
	}
}

func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDocumentPathological extracts inputs built to trigger super-linear
// behaviour (long capitalised runs, brackets, backticks, joiners, acronyms);
// each is about 200 KB.
func BenchmarkDocumentPathological(b *testing.B) {
	x, err := New()
	if err != nil {
		b.Fatal(err)
	}
	inputs := []string{
		strings.Repeat("Foo ", 50_000),
		strings.Repeat("(", 200_000),
		strings.Repeat("`x", 100_000),
		strings.Repeat("A-", 100_000),
		strings.Repeat("a of the and ", 15_000) + "(AAAAAAAAAA)",
		strings.Repeat("Django supports PostgreSQL, ", 7_000),
	}
	size := 0
	for _, s := range inputs {
		size += len(s)
	}
	b.SetBytes(int64(size))
	for b.Loop() {
		for _, s := range inputs {
			x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: s}}})
		}
	}
}
