package fetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"runtime"
	"testing"
)

func gz(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestGzipBombs: a gzip body colly would decompress itself (Content-Encoding
// x-gzip, a gzip Content-Type, a .xml.gz path) is decompressed as a stream
// and held to the body limit like any other: 64 KB of gzip that inflates to
// 64 MB is refused as too_large without allocating it (200 KB inflating to
// 200 MB allocated 516 MB; a 10 MB body could take gigabytes).
func TestGzipBombs(t *testing.T) {
	bomb := gz(t, make([]byte, 64<<20))
	for _, tc := range []struct{ name, path, ctype, enc string }{
		{"Content-Encoding x-gzip", "/page", "text/html", "x-gzip"},
		{"Content-Encoding gzip", "/page", "text/html", "gzip"},
		{"a .xml.gz path", "/s.xml.gz", "text/html", ""},
		{"a gzip Content-Type", "/sitemap.xml", "application/gzip", ""},
	} {
		s := newServer(t, map[string]http.HandlerFunc{
			tc.path: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tc.ctype)
				if tc.enc != "" {
					w.Header().Set("Content-Encoding", tc.enc)
				}
				_, _ = w.Write(bomb)
			},
		})
		f, _ := newFetcher(t, Config{MaxBodyBytes: 1 << 20})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := f.Fetch(context.Background(), Request{URL: s.URL + tc.path, IgnoreRobots: true, Accept: func(string) bool { return true }})
		runtime.ReadMemStats(&after)
		var se *SkipError
		if !errors.As(err, &se) || se.Reason != ReasonTooLarge {
			t.Errorf("%s: got %v, want skipped as too_large", tc.name, err)
		}
		if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 30 {
			t.Errorf("%s: fetching 64 KB that inflates to 64 MB allocated %d MB, want a few (the body limit is 1 MB)", tc.name, mb)
		}
	}
}

// TestGzipSitemapsStillRead: gzipped sitemaps (.xml.gz, a gzip type) and
// gzip-encoded pages are still decompressed, and a body that only claims to
// be gzip is read as sent.
func TestGzipSitemapsStillRead(t *testing.T) {
	xml := []byte(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://docs.example/a</loc></url></urlset>`)
	s := newServer(t, map[string]http.HandlerFunc{
		"/sitemap.xml.gz": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-gzip")
			_, _ = w.Write(gz(t, xml))
		},
		"/typed.xml": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/gzip")
			_, _ = w.Write(gz(t, xml))
		},
		"/plain.xml": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/gzip") // says gzip, is not
			_, _ = w.Write(xml)
		},
		"/page": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "x-gzip")
			_, _ = w.Write(gz(t, []byte("<p>hello</p>")))
		},
	})
	f, _ := newFetcher(t, Config{})
	for _, path := range []string{"/sitemap.xml.gz", "/typed.xml", "/plain.xml"} {
		pages, errs := f.Sitemap(context.Background(), []string{s.URL + path}, false, 5, 100)
		if len(errs) != 0 || len(pages) != 1 || pages[0] != "https://docs.example/a" {
			t.Errorf("sitemap %s: got %v %v, want the one page", path, pages, errs)
		}
	}
	resp, err := f.Fetch(context.Background(), Request{URL: s.URL + "/page", IgnoreRobots: true})
	if err != nil || string(resp.Body) != "<p>hello</p>" {
		t.Errorf("x-gzip page: got %v, want <p>hello</p>", err)
	}
}
