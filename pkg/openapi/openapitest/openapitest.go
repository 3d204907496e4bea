// Package openapitest checks a service's real HTTP answers against its OpenAPI
// document with getkin/kin-openapi: every response (status, headers, body) must be
// one the document describes, TOON bodies included (decoded with pkg/toon and
// checked against the text/toon schema). A Checker also records which operations
// were exercised with which statuses, so a contract test can require that every
// route of the service is documented and covered by a success and an error.
package openapitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/kgsearch/kgsearch/pkg/openapi"
	"github.com/kgsearch/kgsearch/pkg/toon"
)

func init() {
	openapi3filter.RegisterBodyDecoder("text/toon", func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		var v any
		if err := toon.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("not TOON: %w", err)
		}
		return v, nil
	})
	for _, ct := range []string{"text/event-stream", "text/html", "text/css", "text/javascript", "image/png"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
}

// Checker validates answers against one document.
type Checker struct {
	t      testing.TB
	doc    *openapi3.T
	router routers.Router
	mu     sync.Mutex
	seen   map[string]map[int]bool // "GET /api/v1/x/{id}" → statuses validated
}

// New loads and validates the YAML document.
func New(t testing.TB, yamlDoc []byte) *Checker {
	t.Helper()
	js, err := openapi.JSON(yamlDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(js)
	if err != nil {
		t.Fatalf("load the OpenAPI document: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is invalid: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi: %s, want 3.1", doc.OpenAPI)
	}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatalf("route the OpenAPI document: %v", err)
	}
	return &Checker{t: t, doc: doc, router: r, seen: map[string]map[int]bool{}}
}

// Do serves req with h and checks the answer, which it returns.
func (c *Checker) Do(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	c.t.Helper()
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	req.Body = io.NopCloser(bytes.NewReader(body))
	c.Check(req, rec.Code, rec.Header(), rec.Body.Bytes())
	return rec
}

// Check validates one answer to req.
func (c *Checker) Check(req *http.Request, status int, header http.Header, body []byte) {
	c.t.Helper()
	// The document's server is "/": route on the path alone, whatever host served it.
	req = req.Clone(req.Context())
	req.URL = &url.URL{Path: req.URL.Path, RawPath: req.URL.RawPath, RawQuery: req.URL.RawQuery}
	route, params, err := c.router.FindRoute(req)
	if err != nil {
		c.t.Errorf("%s %s: not in the OpenAPI document: %v", req.Method, req.URL.Path, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		b := string(body)
		if len(b) > 600 {
			b = b[:600] + "..."
		}
		c.t.Errorf("%s %s → %d %s does not match the document: %v\nbody: %s", req.Method, req.URL.RequestURI(), status,
			header.Get("Content-Type"), err, b)
	}
	key := route.Method + " " + route.Path
	c.mu.Lock()
	if c.seen[key] == nil {
		c.seen[key] = map[int]bool{}
	}
	c.seen[key][status] = true
	c.mu.Unlock()
}

// Operations lists the document's operations as "METHOD /path/{param}".
func (c *Checker) Operations() []string {
	var ops []string
	for p, item := range c.doc.Paths.Map() {
		for m := range item.Operations() {
			ops = append(ops, m+" "+p)
		}
	}
	sort.Strings(ops)
	return ops
}

// Routes checks that the served routes (gin's "METHOD /path/:param" form) and the
// document's operations are the same set, leaving out paths under the ignored
// prefixes (the docs page's assets, the MCP endpoint).
func (c *Checker) Routes(served []string, ignore ...string) {
	c.t.Helper()
	var norm []string
	for _, r := range served {
		m, p, _ := strings.Cut(r, " ")
		if slices.ContainsFunc(ignore, func(pre string) bool { return strings.HasPrefix(p, pre) }) {
			continue
		}
		parts := strings.Split(p, "/")
		for i, s := range parts {
			if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
				parts[i] = "{" + s[1:] + "}"
			}
		}
		norm = append(norm, m+" "+strings.Join(parts, "/"))
	}
	sort.Strings(norm)
	norm = slices.Compact(norm)
	ops := c.Operations()
	for _, r := range norm {
		if !slices.Contains(ops, r) {
			c.t.Errorf("route %s is served but not in the OpenAPI document", r)
		}
	}
	for _, o := range ops {
		if !slices.Contains(norm, o) {
			c.t.Errorf("operation %s is in the OpenAPI document but not served", o)
		}
	}
}

// Covered checks that every operation was exercised with a success (2xx or 3xx)
// and, unless listed in noError, with an error (4xx); it reports what was missed.
func (c *Checker) Covered(noError ...string) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, op := range c.Operations() {
		var ok, bad bool
		for s := range c.seen[op] {
			ok = ok || s < 400
			bad = bad || (s >= 400 && s < 500)
		}
		if !ok {
			c.t.Errorf("operation %s: no successful answer was checked", op)
		}
		if !bad && !slices.Contains(noError, op) {
			c.t.Errorf("operation %s: no error answer was checked", op)
		}
	}
}

// Fetch sends a request to a running server at base, checks the answer and
// returns it. A JSON body is sent as application/json unless hdr sets a
// Content-Type; hdr holds header name/value pairs.
func (c *Checker) Fetch(base, method, path, body string, hdr ...string) (int, http.Header, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	req.Body = io.NopCloser(strings.NewReader(body))
	c.Check(req, resp.StatusCode, resp.Header, data)
	return resp.StatusCode, resp.Header, data
}

// Doc is the loaded document, for checks of its own (an enum against the code).
func (c *Checker) Doc() *openapi3.T { return c.doc }
