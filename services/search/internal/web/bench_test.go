package web

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// BenchmarkSearchPage renders the search page of a ten-result answer (the fake
// searcher answers at once, so this is the page's own cost: reading the form,
// highlighting, bars, citations and the template).
func BenchmarkSearchPage(b *testing.B) {
	r := newRig(b, nil)
	e := gin.New()
	r.web.Register(e)
	req := httptest.NewRequest(http.MethodGet, "/?q=python+virtual+environment+venv&x=1&w_vector=0.35&w_graph=0.25&w_bm25=0.2&w_recency=0.1&w_title=0.1&expand=true", nil)
	b.ReportAllocs()
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/page")
}
