package mcpserver

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// rpcClient posts raw JSON-RPC bodies to a streamable HTTP endpoint, keeping
// the session the server hands out.
type rpcClient struct {
	t       *testing.T
	url     string
	version string // MCP-Protocol-Version header after initialize
	session string
}

// post sends body and returns the status and the JSON-RPC message(s) answered
// (the data of the event stream, or the JSON body).
func (c *rpcClient) post(body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		if c.version != "" {
			req.Header.Set("MCP-Protocol-Version", c.version)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	return resp.StatusCode, strings.Join(data, "\n")
}

// initialize opens a session speaking version.
func (c *rpcClient) initialize(version string) {
	c.t.Helper()
	c.version = version
	status, body := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if status != http.StatusOK || !strings.Contains(body, `"result"`) {
		c.t.Fatalf("initialize %s: got %d %s, want 200 with a result", version, status, body)
	}
	if status, body := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: got %d %s, want 202", status, body)
	}
}

// TestDuplicateKeysAreInvalidRequests checks that the MCP endpoint refuses a
// message with a key given twice (which the SDK would read as the last value)
// with 400 and a JSON-RPC Invalid Request naming the key, before any tool runs,
// while valid messages and batches still work.
func TestDuplicateKeysAreInvalidRequests(t *testing.T) {
	f := echoSearchFake(t)
	srv := httptest.NewServer(HTTPHandler(f.deps(), nil))
	t.Cleanup(srv.Close)

	c := &rpcClient{t: t, url: srv.URL}
	c.initialize("2025-06-18")
	status, body := c.post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"venv","format":"json"}}}`)
	if status != http.StatusOK || !strings.Contains(body, `\"query\":\"venv\"`) || f.requests.Load() != 1 {
		t.Fatalf("a valid tools/call: got %d %s (%d searches), want 200 with the search's answer", status, body, f.requests.Load())
	}

	for _, c2 := range []struct {
		name, body, path string
	}{
		{"in arguments", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","q":"b"}}}`, "params.arguments.q"},
		{"the id", `{"jsonrpc":"2.0","id":3,"method":"tools/call","id":4,"params":{"name":"search","arguments":{"q":"a"}}}`, "id"},
		{"the tool name", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"crawl","name":"search","arguments":{"q":"a"}}}`, "params.name"},
		{"escaped", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","\u0071":"b"}}}`, "params.arguments.q"},
		// The SDK reads the first JSON value of a body and ignores what follows it.
		{"before trailing data", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","q":"b"}}} x`, "params.arguments.q"},
		{"before a second value", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","q":"b"}}}{}`, "params.arguments.q"},
	} {
		t.Run(c2.name, func(t *testing.T) {
			status, body := c.post(c2.body)
			checkInvalidRequest(t, status, body, http.StatusBadRequest, c2.path)
		})
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("searches run: got %d, want 1 (refused messages must not reach a tool)", n)
	}

	// Batches (protocol versions before 2025-06-18): every message is checked.
	old := &rpcClient{t: t, url: srv.URL}
	old.initialize("2025-03-26")
	status, body = old.post(`[{"jsonrpc":"2.0","id":10,"method":"ping"},{"jsonrpc":"2.0","id":11,"method":"tools/list"}]`)
	if status != http.StatusOK || !strings.Contains(body, `"id":10`) || !strings.Contains(body, `"id":11`) {
		t.Fatalf("a valid batch: got %d %s, want 200 answering ids 10 and 11", status, body)
	}
	status, body = old.post(`[{"jsonrpc":"2.0","id":12,"method":"ping"},` +
		`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","k":1,"k":2}}}]`)
	checkInvalidRequest(t, status, body, http.StatusBadRequest, "[1].params.arguments.k")
	if n := f.requests.Load(); n != 1 {
		t.Errorf("searches run after the batch: got %d, want 1", n)
	}

	// A body that is not JSON is a JSON-RPC Parse error, as on stdio (the SDK
	// answered it in plain text); the session goes on.
	for _, bad := range []string{"garbage", `{"jsonrpc":"2.0","id":`, "]"} {
		status, body = c.post(bad)
		got, err := decodeRPCError(body)
		if status != http.StatusBadRequest || err != nil || string(got.ID) != "null" || got.Error.Code != -32700 ||
			!strings.HasPrefix(got.Error.Message, "parse error: the body is not JSON (") {
			t.Errorf("POST %q: got %d %s, want 400 with a JSON-RPC Parse error, id null", bad, status, body)
		}
	}
	if status, body := c.post(`{"jsonrpc":"2.0","id":21,"method":"ping"}`); status != http.StatusOK || !strings.Contains(body, `"id":21`) {
		t.Errorf("a ping after the bodies that are not JSON: %d %s", status, body)
	}

	// The body stays bounded.
	big := `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"search","arguments":{"q":"` +
		strings.Repeat("a", maxBody) + `"}}}`
	status, body = c.post(big)
	checkInvalidRequest(t, status, body, http.StatusRequestEntityTooLarge, "")
}

// checkInvalidRequest checks an answer is status with one JSON-RPC Invalid
// Request error, id null, naming path (in the message and data.field) when set.
func checkInvalidRequest(t *testing.T, status int, body string, wantStatus int, path string) {
	t.Helper()
	got, err := decodeRPCError(body)
	if err != nil {
		t.Fatalf("got %d %s, want a JSON-RPC error object (%v)", status, body, err)
	}
	if status != wantStatus || got.JSONRPC != "2.0" || string(got.ID) != "null" || got.Error.Code != -32600 {
		t.Errorf("got %d %s, want %d with a JSON-RPC error, code -32600, id null", status, body, wantStatus)
	}
	if path != "" && (got.Error.Data.Field != path || !strings.Contains(got.Error.Message, path+" is given twice")) {
		t.Errorf("got %s, want the message and data.field naming %s", body, path)
	}
}

// rpcErrorAnswer is a JSON-RPC error response as a client reads it.
type rpcErrorAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    struct {
			Field string `json:"field"`
		} `json:"data"`
	} `json:"error"`
}

// decodeRPCError reads s as one JSON-RPC error response with no other member.
func decodeRPCError(s string) (rpcErrorAnswer, error) {
	var got rpcErrorAnswer
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	err := dec.Decode(&got)
	return got, err
}

// echoSearchFake is a fake stack whose search answers with the query it was sent and
// no results: a test reads which q reached the search API.
func echoSearchFake(t *testing.T) *fakeServices {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/search", func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": req["q"], "results": []any{}})
	})
	return newFake(t, mux)
}

// TestBatchesCarryOneToolCall: a JSON-RPC batch (protocol versions before
// 2025-06-18) may hold at most one tools/call and maxBatch messages. The
// search service's rate limit counts a POST to /mcp as one search, and the
// tools call its API in process, unlimited: a batch of a thousand searches
// used to cost one request of the limit.
func TestBatchesCarryOneToolCall(t *testing.T) {
	f := echoSearchFake(t)
	srv := httptest.NewServer(HTTPHandler(f.deps(), nil))
	t.Cleanup(srv.Close)
	old := &rpcClient{t: t, url: srv.URL}
	old.initialize("2025-03-26")
	search := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search","arguments":{"q":"q%d"}}}`, id, id)
	}
	status, body := old.post("[" + search(1) + `,{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
	if status != http.StatusOK || f.requests.Load() != 1 {
		t.Fatalf("a batch with one tool call: got %d %s (%d searches), want 200 and 1 search", status, body, f.requests.Load())
	}
	calls := make([]string, 5)
	for i := range calls {
		calls[i] = search(10 + i)
	}
	status, body = old.post("[" + strings.Join(calls, ",") + "]")
	checkInvalidRequest(t, status, body, http.StatusBadRequest, "")
	if got, _ := decodeRPCError(body); got.Error.Data.Field != "[1].method" || !strings.Contains(got.Error.Message, "at most one tools/call") {
		t.Errorf("batch of five searches: got %s, want the second tools/call named and what to do", body)
	}
	// Without the MCP-Protocol-Version header the SDK takes a batch in any session.
	cur := &rpcClient{t: t, url: srv.URL}
	cur.initialize("2025-06-18")
	cur.version = ""
	status, body = cur.post("[" + strings.Join(calls, ",") + "]")
	checkInvalidRequest(t, status, body, http.StatusBadRequest, "")
	pings := make([]string, maxBatch+1)
	for i := range pings {
		pings[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 100+i)
	}
	status, body = old.post("[" + strings.Join(pings, ",") + "]")
	checkInvalidRequest(t, status, body, http.StatusBadRequest, "")
	if !strings.Contains(body, fmt.Sprintf("at most %d messages", maxBatch)) {
		t.Errorf("batch of %d pings: got %s, want the limit named", len(pings), body)
	}
	if n := f.requests.Load(); n != 1 {
		t.Errorf("searches run: got %d, want 1 (refused batches run nothing)", n)
	}
}
