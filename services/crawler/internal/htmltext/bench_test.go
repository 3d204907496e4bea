package htmltext

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// BenchmarkExtractHostile extracts pages of 1 MB built to make the
// extractor work hard (see hostilePage).
func BenchmarkExtractHostile(b *testing.B) {
	for _, kind := range hostileKinds {
		b.Run(kind, func(b *testing.B) {
			benchmarkExtract(b, hostilePage(kind, hostileSize(b)), "https://hostile.example.com/page.html")
		})
	}
}

// hostileSize is the size of BenchmarkExtractHostile's pages: 1 MB, or
// KGS_HOSTILE_KB kilobytes.
func hostileSize(b *testing.B) int {
	if kb, err := strconv.Atoi(os.Getenv("KGS_HOSTILE_KB")); err == nil && kb > 0 {
		return kb << 10
	}
	return 1 << 20
}

// BenchmarkExtractFile extracts the file KGS_EXTRACT_FILE; skipped without it.
func BenchmarkExtractFile(b *testing.B) {
	name := os.Getenv("KGS_EXTRACT_FILE")
	if name == "" {
		b.Skip("KGS_EXTRACT_FILE not set")
	}
	body, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	benchmarkExtract(b, body, "http://127.0.0.1:8099/"+filepath.Base(name))
}

// BenchmarkDetectShellHostile checks for a shell a 1 MB page of empty lists
// nested in list items, 250 deep.
func BenchmarkDetectShellHostile(b *testing.B) {
	group := strings.Repeat("<ul><li>", 250) + strings.Repeat("</li></ul>", 250)
	body := []byte("<html><body><script src=/app.js></script>" + strings.Repeat(group, hostileSize(b)/len(group)) + "</body></html>")
	b.SetBytes(int64(len(body)))
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if DetectShell(body, "text/html") == nil {
			b.Fatal("not a shell")
		}
	}
	reportCPU(b, cpu0)
}
