// Package apiclient is a small HTTP client for the REST APIs of the search service
// and the crawler, shared by the MCP server (pkg/mcpserver), the kgs command
// line and the relevance evaluation (cmd/kgeval). Errors keep what the services said: a 4xx/5xx answer is an *Error carrying
// the RFC 9457 problem document (title, detail and the field at fault); a service
// that cannot be reached is ErrUnreachable.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// ErrUnreachable wraps failures to reach a service at all (connection refused,
// DNS, a reset): nothing was answered.
var ErrUnreachable = errors.New("service unreachable")

// Error is an HTTP error answer of a service.
type Error struct {
	Service string // "search", "crawler", "kg"
	Status  int
	Title   string
	Detail  string
	Field   string // the request field at fault, when the service named one
	// Location is the answer's Location header: a 409 of POST
	// /api/v1/crawls points to the identical job already queued or running.
	Location string
}

func (e *Error) Error() string {
	msg := e.Detail
	if msg == "" {
		msg = e.Title
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Field != "" {
		return fmt.Sprintf("%s: %d: %s: %s", e.Service, e.Status, e.Field, msg)
	}
	return fmt.Sprintf("%s: %d: %s", e.Service, e.Status, msg)
}

// StatusOf returns the HTTP status of an *Error in err's chain, or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// maxBody bounds what is read of one answer.
const maxBody = 64 << 20

// base is what both clients share: a base URL, an HTTP client and an API key.
type base struct {
	service string
	url     string
	http    *http.Client
	apiKey  string
}

func newBase(service, baseURL string, hc *http.Client, apiKey string) base {
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	return base{service: service, url: strings.TrimRight(baseURL, "/"), http: hc, apiKey: apiKey}
}

// request sends one request and returns the answer's body and content type; a
// status >= 400 is an *Error.
func (b base) request(ctx context.Context, method, path string, in any, accept string) ([]byte, string, error) {
	resp, err := b.open(ctx, method, path, in, accept)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, "", fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode >= 400 {
		return nil, "", Problem(b.service, resp.StatusCode, data)
	}
	return data, resp.Header.Get("Content-Type"), nil
}

// NewRequest builds a request to one of the services' APIs: in, when not nil,
// is sent as a JSON body; accept, when set, is the Accept header; apiKey, when
// set, is sent as a bearer token. pkg/kgapi builds its requests here too.
func NewRequest(ctx context.Context, method, url string, in any, accept, apiKey string) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, fmt.Errorf("build request %s %s: %w", method, url, err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	return req, nil
}

// open sends a request and returns the response with its body unread when the
// status is below 400 (for streams); otherwise the body is read into an *Error.
func (b base) open(ctx context.Context, method, path string, in any, accept string) (*http.Response, error) {
	req, err := NewRequest(ctx, method, b.url+path, in, accept, b.apiKey)
	if err != nil {
		return nil, err
	}
	resp, err := b.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		return nil, fmt.Errorf("%w: %s at %s: %v", ErrUnreachable, b.service, b.url, err) //nolint:errorlint // the sentinel is the one class callers test; the transport error stays text so its own class (a timeout) does not leak
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		e := Problem(b.service, resp.StatusCode, data)
		e.Location = resp.Header.Get("Location")
		return nil, e
	}
	return resp, nil
}

// getJSON decodes a JSON answer into out.
func (b base) getJSON(ctx context.Context, method, path string, in, out any) error {
	data, _, err := b.request(ctx, method, path, in, "application/json")
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode %s answer of %s %s: %w", b.service, method, path, err)
	}
	return nil
}

// Problem turns an error answer of service into an *Error, reading the RFC 9457
// problem document when there is one (else the answer's first 200 bytes are the
// detail). pkg/kgapi reads the kg service's problems here too.
func Problem(service string, status int, data []byte) *Error {
	e := &Error{Service: service, Status: status}
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Field  string `json:"field"`
	}
	if json.Unmarshal(data, &p) == nil {
		e.Title, e.Detail, e.Field = p.Title, p.Detail, p.Field
	}
	if e.Title == "" && e.Detail == "" {
		s := strings.TrimSpace(string(data))
		if len(s) > 200 {
			s = s[:200]
		}
		e.Detail = s
	}
	return e
}
