package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// TestStdioReaderChecksEachMessage feeds dupKeyReader input and compares what
// reaches the SDK and what is answered: a message with a key given twice is
// answered with an Invalid Request error (its id when it was given once) and
// kept from the SDK; a line that is not JSON, from where it stops being JSON to
// its end, is answered with a Parse error and kept from the SDK (field
// parseError); everything else reaches the SDK byte for byte.
func TestStdioReaderChecksEachMessage(t *testing.T) {
	for _, c := range []struct {
		name, in, sdk string
		id, field     string // of the answer ("" when none)
	}{
		{"valid", `{"id":1,"a":1}` + "\n", `{"id":1,"a":1}` + "\n", "", ""},
		{"duplicate", `{"id":1,"method":"x","a":1,"a":2}` + "\n", "", "1", "a"},
		{"string id", `{"id":"r-1","method":"x","p":{"q":"a","q":"b"}}` + "\r\n", "", `"r-1"`, "p.q"},
		{"the id itself", `{"id":1,"id":2}` + "\n", "", "null", "id"},
		{"null id", `{"id":null,"a":1,"a":2}` + "\n", "", "null", "a"},
		{"no id (a notification)", `{"method":"x","params":{"a":1,"a":2}}` + "\n", "", "null", "params.a"},
		{"escaped", `{"id":7,"method":"x","q":1,"\u0071":2}` + "\n", "", "7", "q"},
		{"at the end without a newline", `{"id":3,"method":"x","a":1,"a":2}`, "", "3", "a"},
		{"over lines", "{\n  \"id\": 4,\n  \"method\": \"x\",\n  \"a\": 1,\n  \"a\": 2\n}\n", "", "4", "a"},
		{"valid over lines", "\n{\n  \"id\": 4\n}\n", "\n{\n  \"id\": 4\n}\n", "", ""},
		{"batch", `[{"id":1,"method":"ping"},{"id":2,"k":1,"k":2}]` + "\n", "", "null", "[1].k"},
		{"not JSON", "not json\n" + `{"id":5}` + "\n", `{"id":5}` + "\n", "null", parseError},
		{"not JSON after white space", "  \t}\r\n" + `{"id":5}` + "\n", `{"id":5}` + "\n", "null", parseError},
		{"trailing data", `{"id":1} {"id":2,"method":"x","a":1,"a":2}` + "\n", `{"id":1} `, "2", "a"},
		{"two on a line", `{"id":1,"method":"x","a":1,"a":2}` + "\r" + `{"id":2}` + "\n", "\r" + `{"id":2}` + "\n", "1", "a"},
		{"then not JSON", `{"id":1}` + "\r" + `x {"id":2,"a":1,"a":2}` + "\n", `{"id":1}`, "null", parseError},
		{"id given twice after the key", `{"id":1,"method":"x","a":1,"a":2,"id":2}` + "\n", "", "null", "a"},
		{"a response", `{"id":1,"result":{"a":1,"a":2}}` + "\n", "", "null", "result.a"},
		{"cut short", `{"id":1,"a":`, `{"id":1,"a":`, "", ""},
		{"brackets in strings", "{\"id\":8,\"method\":\"x\",\n\"s\":\"}]\\\"{\",\n\"s\":1}\n", "", "8", "s"},
		{"after a refusal", `{"id":1,"method":"x","a":1,"a":2}` + "\n" + `{"id":2,` + "\n" + `"b":[1]}` + "\n", `{"id":2,` + "\n" + `"b":[1]}` + "\n", "1", "a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			tr := StdioTransport(strings.NewReader(c.in), &out)
			got, err := io.ReadAll(tr.Reader)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.sdk {
				t.Errorf("the SDK read %q, want %q", got, c.sdk)
			}
			if c.field == "" {
				if out.Len() != 0 {
					t.Errorf("answered %q, want nothing", out.String())
				}
				return
			}
			if c.field == parseError {
				checkStdioParseError(t, out.String())
				return
			}
			checkStdioRefusal(t, out.String(), c.id, c.field)
		})
	}
	// A message longer than the limit, which the SDK refuses and ends the session
	// for, is answered and ends the input: none of it reaches the SDK unchecked,
	// nor does the message after it. So does a line of the exact limit.
	for _, long := range []string{
		`{"id":1,"method":"x","a":"` + strings.Repeat("x", 300) + `","a":2}` + "\n",
		`{"id":1,"a":"` + strings.Repeat("x", 100-len(`{"id":1,"a":"","a":2}`)) + `","a":2}` + "\n",
		"{\n" + strings.Repeat(`"a":1,`+"\n", 30) + `"a":2}` + "\n",
	} {
		var out bytes.Buffer
		r := &dupKeyReader{src: bufio.NewReaderSize(strings.NewReader(long+`{"id":2,"b":1,"b":2}`+"\n"), 16), out: &out, limit: 100}
		got, err := io.ReadAll(r)
		if len(long) > 101 && (!errors.Is(err, errMessageTooLarge) || len(got) != 0) {
			t.Errorf("over the limit: the SDK read %q (%v), want nothing and errMessageTooLarge", got, err)
		}
		if len(long) > 101 && !strings.Contains(out.String(), `"code":-32600,"message":"a message exceeds 100 bytes; send a smaller one"`) {
			t.Errorf("over the limit: answered %q, want an Invalid Request error saying the limit", out.String())
		}
		if len(long) <= 101 && (err != nil || string(got) != "") {
			t.Errorf("at the limit: the SDK read %q (%v), want nothing: both messages refused", got, err)
		}
	}
}

// parseError marks the cases of TestStdioReaderChecksEachMessage answered with
// a Parse error.
const parseError = "(parse error)"

// stdioErrorLine checks line is one line holding a JSON-RPC error object and
// returns it decoded.
func stdioErrorLine(t *testing.T, line string) rpcErrorAnswer {
	t.Helper()
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 {
		t.Errorf("answer %q: want one line", line)
	}
	got, err := decodeRPCError(line)
	if err != nil {
		t.Fatalf("answer %q: want a JSON-RPC error object (%v)", line, err)
	}
	return got
}

// checkStdioParseError checks line is one JSON-RPC Parse error with id null
// that says the line is not JSON.
func checkStdioParseError(t *testing.T, line string) {
	t.Helper()
	got := stdioErrorLine(t, line)
	if got.JSONRPC != "2.0" || string(got.ID) != "null" || got.Error.Code != -32700 ||
		!strings.HasPrefix(got.Error.Message, "parse error: the line is not JSON (") {
		t.Errorf("answer %q: want code -32700, id null and a message saying the line is not JSON", line)
	}
}

// checkStdioRefusal checks line is one JSON-RPC Invalid Request error with id
// (JSON) naming field, as the HTTP endpoint's.
func checkStdioRefusal(t *testing.T, line, id, field string) {
	t.Helper()
	got := stdioErrorLine(t, line)
	if got.JSONRPC != "2.0" || string(got.ID) != id || got.Error.Code != -32600 || got.Error.Data.Field != field ||
		got.Error.Message != field+" is given twice in one object; send it once" {
		t.Errorf("answer %q: want code -32600, id %s, data.field %s and a message naming it", line, id, field)
	}
}

// TestStdioRefusesDuplicateKeys serves the tools over StdioTransport and speaks
// raw JSON-RPC lines to it: a message with a key given twice is answered with
// the Invalid Request error of the HTTP endpoint, reaches no tool, and the
// session answers the messages after it.
func TestStdioRefusesDuplicateKeys(t *testing.T) {
	f := echoSearchFake(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- New(f.deps()).Run(ctx, StdioTransport(inR, outW))
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		cancel()
		select {
		case err := <-done: // the end of the input or the cancel; either ends the session
			t.Logf("the session ended: %v", err)
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text() + "\n"
		}
		close(lines)
	}()
	send := func(msg string) {
		t.Helper()
		if _, err := io.WriteString(inW, msg+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	answer := func() string {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the session ended")
			}
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no answer")
		}
		return ""
	}
	// 2025-03-26 still has batches.
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if a := answer(); !strings.Contains(a, `"id":0`) || !strings.Contains(a, `"result"`) {
		t.Fatalf("initialize: %s", a)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, c := range []struct{ msg, id, field string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","q":"b"}}}`, "1", "params.arguments.q"},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/call","id":3,"params":{"name":"search","arguments":{"q":"a"}}}`, "null", "id"},
		{`{"jsonrpc":"2.0","id":"s4","method":"tools/call","params":{"name":"crawl","name":"search","arguments":{"q":"a"}}}`, `"s4"`, "params.name"},
		{`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","k":1,"k":2}}}]`, "null", "[1].params.arguments.k"},
	} {
		send(c.msg)
		checkStdioRefusal(t, answer(), c.id, c.field)
	}
	// Two messages on one line, apart by a carriage return: white space to the
	// SDK's decoder, which reads and serves both. The one that gives a key twice
	// is refused all the same, and the other is answered.
	send(`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"search","arguments":{"q":"a","q":"b"}}}` +
		"\r" + `{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	checkStdioRefusal(t, answer(), "10", "params.arguments.q")
	if a := answer(); !strings.Contains(a, `"id":11`) || !strings.Contains(a, `"result"`) {
		t.Errorf("the ping after the refused message on its line: %s", a)
	}
	if n := f.requests.Load(); n != 0 {
		t.Errorf("refused messages reached a tool: %d searches", n)
	}
	// The session goes on: a call and a batch are answered.
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search","arguments":{"q":"venv","format":"json"}}}`)
	if a := answer(); !strings.Contains(a, `"id":7`) || !strings.Contains(a, `\"query\":\"venv\"`) || f.requests.Load() != 1 {
		t.Errorf("a valid call after the refusals: %s (%d searches), want the search's answer", a, f.requests.Load())
	}
	send(`[{"jsonrpc":"2.0","id":8,"method":"ping"},{"jsonrpc":"2.0","id":9,"method":"ping"}]`)
	if a := answer(); !strings.Contains(a, `"id":8`) || !strings.Contains(a, `"id":9`) {
		t.Errorf("a valid batch after the refusals: %s", a)
	}
	// A line that is not JSON (a person typing at kgs mcp) is answered with a
	// Parse error; the SDK, which would end the session at it, never reads it,
	// and the session goes on.
	send(`garbage`)
	checkStdioParseError(t, answer())
	send(`{"jsonrpc":"2.0","id":12,"method":"ping"}`)
	if a := answer(); !strings.Contains(a, `"id":12`) || !strings.Contains(a, `"result"`) {
		t.Errorf("a ping after a line that is not JSON: %s", a)
	}
}

// FuzzStdioReader: whatever the input, the reader does not fail or lose bytes,
// and no value the SDK's decoder reads from it gives a key twice. When it
// answers nothing, the SDK reads the input unchanged; when it answers, each
// answer is an Invalid Request or a Parse error and what the SDK reads is the
// input without some of its bytes. Only an input over the limit ends with an error.
func FuzzStdioReader(f *testing.F) {
	for _, s := range []string{`{"id":1,"a":1}` + "\n", `{"id":1,"a":1,"a":2}` + "\n", "{\n\"id\":2,\n\"b\":[1,\n2]}\n",
		`[{"id":1},{"id":2,"k":1,"k":2}]`, "not json\n", `{"s":"}\"{","s":1}`, "\n\n", `{"a":{"b":1,"b":2}}{"c":1}` + "\n",
		`{"id":1}` + "\r" + `{"a":1,"a":2}` + "\n", "]\n" + `{"a":1,"a":2}` + "\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var out bytes.Buffer
		const limit = 1 << 12
		r := &dupKeyReader{src: bufio.NewReaderSize(strings.NewReader(in), 16), out: &out, limit: limit}
		got, err := io.ReadAll(r)
		if err != nil && !(errors.Is(err, errMessageTooLarge) && len(in) > limit) {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(got))
		for {
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				break
			}
			if e := httpserver.DuplicateKey(v); e != nil {
				t.Fatalf("the SDK reads %s of %q, which gives a key twice", v, in)
			}
		}
		if out.Len() == 0 {
			if string(got) != in {
				t.Fatalf("nothing answered, but the SDK read %q of %q", got, in)
			}
			return
		}
		if len(got) >= len(in) {
			t.Fatalf("answered %q, but the SDK read all of %q", out.String(), in)
		}
		for _, line := range strings.SplitAfter(strings.TrimSuffix(out.String(), "\n"), "\n") {
			var e struct {
				Error struct{ Code int } `json:"error"`
			}
			if json.Unmarshal([]byte(line), &e) != nil || e.Error.Code != -32600 && e.Error.Code != -32700 {
				t.Fatalf("answer %q is not an Invalid Request or Parse error", line)
			}
		}
	})
}

// TestStdioAnswersBeforeTheInputEnds: requests piped in with the input closed
// right after them (printf '...' | kgs mcp) are all answered before the session
// ends; the SDK ends it at the end of its input, and used to drop the answers
// of the calls still running (the initialize's too), printing nothing.
func TestStdioAnswersBeforeTheInputEnds(t *testing.T) {
	f := echoSearchFake(t)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"venv","format":"json"}}}`,
		`{"jsonrpc":"2.0","id":"two","method":"ping"}`,
		`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`,
	}, "\n") + "\n"
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_ = New(f.deps()).Run(ctx, StdioTransport(strings.NewReader(in), &out))
	got := out.String()
	for _, id := range []string{`"id":0,"result"`, `"id":1,"result"`, `"id":"two","result"`, `"id":3,"error"`} {
		if !strings.Contains(got, id) {
			t.Errorf("no answer with %s before the session ended; the session wrote:\n%s", id, got)
		}
	}
	if !strings.Contains(got, `\"query\":\"venv\"`) || f.requests.Load() != 1 {
		t.Errorf("the search call: %d searches, answers %s", f.requests.Load(), got)
	}
}

// TestInflight: a request is waited for until it is answered (a number id
// matches 1.0 written as 1), a cancelled one is not, a batch counts each
// request, and Close ends a wait.
func TestInflight(t *testing.T) {
	f := newInflight()
	f.sent([]byte(`{"jsonrpc":"2.0","id":1.0,"method":"tools/call"}`))
	f.sent([]byte(`[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`))
	f.sent([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`))
	f.sent([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`))
	f.sent([]byte(`{"jsonrpc":"2.0","id":9,"result":{}}`)) // a client's response is no request
	done := make(chan struct{})
	go func() { f.wait(time.Minute); close(done) }()
	f.answered([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}` + "\n"))
	select {
	case <-done:
		t.Fatal("the wait ended with request 1 unanswered")
	case <-time.After(50 * time.Millisecond):
	}
	f.answered([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"x"}}` + "\n"))
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the wait did not end when every request was answered")
	}
	f.sent([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call"}`))
	go f.close()
	start := time.Now()
	f.wait(time.Minute)
	if time.Since(start) > 10*time.Second {
		t.Error("Close did not end the wait")
	}
}

// syncBuffer is a bytes.Buffer safe for the SDK's writer and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
