package openapi

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestDocsPageCannotBeFramed: the reference page refuses to be framed by other
// sites (its "Try it out" forms send requests with the visitor's credentials)
// and is not content-sniffed.
func TestDocsPageCannotBeFramed(t *testing.T) {
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	if err := Mount(e, "test", []byte("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\n")); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/docs", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /docs: got %d", rec.Code)
	}
	for name, want := range map[string]string{
		"Content-Security-Policy": "frame-ancestors 'none'",
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
	} {
		if got := rec.Header().Get(name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}
