package htmltext

import (
	"os"
	"path/filepath"
	"testing"
)

func benchmarkExtract(b *testing.B, body []byte, pageURL string) {
	u := mustURL(b, pageURL)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if _, err := Extract(body, u, "text/html", nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	reportCPU(b, cpu0)
}

func BenchmarkExtractArticle(b *testing.B) {
	body, err := os.ReadFile(filepath.Join("testdata", "article.html"))
	if err != nil {
		b.Fatal(err)
	}
	benchmarkExtract(b, body, "https://docs.example.com/guide/chunking.html")
}

// BenchmarkExtractPythonFunctions extracts library/functions.html of the
// Python manual (290 KB of HTML); skipped without KGS_PYDOC_DIR.
func BenchmarkExtractPythonFunctions(b *testing.B) {
	body, err := os.ReadFile(filepath.Join(pydocDir(b), "library", "functions.html"))
	if err != nil {
		b.Fatal(err)
	}
	benchmarkExtract(b, body, "http://127.0.0.1:8099/library/functions.html")
}
