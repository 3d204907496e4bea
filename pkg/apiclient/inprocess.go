package apiclient

import (
	"net/http"
	"net/http/httptest"
)

// InProcess returns an HTTP client that hands requests to h directly, without a
// network: the search service's MCP tools call its own REST API this way, through
// the same routes, validation and problem documents as remote clients. Answers
// are buffered, so it is not for streams.
func InProcess(h http.Handler) *http.Client {
	return &http.Client{Transport: handlerTransport{h}}
}

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	// The handler sees a server-side request: no RequestURI rewriting is needed
	// for gin, which routes on URL.Path.
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
