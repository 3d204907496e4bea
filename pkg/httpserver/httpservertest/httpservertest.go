// Package httpservertest holds test helpers for services built on pkg/httpserver.
package httpservertest

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// AnonymousStatus sends every route of srv under prefix without a key, path
// parameters filled in, from a non-loopback client address, and returns each route's
// status by "METHOD /path". The key check runs before any handler, so handlers built
// with nil dependencies are never reached on a 401; a handler that is reached and
// panics leaves the status 0.
func AnonymousStatus(t testing.TB, srv *httpserver.Server, prefix string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range srv.Engine().Routes() {
		if !strings.HasPrefix(r.Path, prefix) {
			continue
		}
		path := r.Path
		for _, seg := range strings.Split(r.Path, "/") {
			if strings.HasPrefix(seg, ":") || strings.HasPrefix(seg, "*") {
				path = strings.Replace(path, seg, "x", 1)
			}
		}
		req := httptest.NewRequest(r.Method, path, strings.NewReader("{}"))
		req.RemoteAddr = "192.0.2.1:1000"
		rec := httptest.NewRecorder()
		func() {
			defer func() { _ = recover() }() // a handler reached with nil deps: status stays 0
			srv.Engine().ServeHTTP(rec, req)
		}()
		out[r.Method+" "+r.Path] = rec.Code
	}
	return out
}
