package mcpserver

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// StdioTransport is the SDK's stdio transport (newline-delimited JSON-RPC) over
// in and out with the check HTTPHandler makes: a message that gives a key twice
// in one object (at any depth, in any message of a batch) never reaches the SDK,
// whose decoder would keep the last value. It is answered on out with the
// JSON-RPC Invalid Request error the HTTP endpoint sends, naming the key's path
// in the message and data.field, and the session goes on with the next message.
// The answer carries the message's id when that was given once (a number or a
// string, in a message that is not a batch), so the client's call ends with the
// error instead of waiting; otherwise its id is null. Every other input reaches
// the SDK byte for byte, as it was sent. Closing the transport closes neither
// in nor out.
func StdioTransport(in io.Reader, out io.Writer) *mcp.IOTransport {
	w := &lockedWriter{w: out}
	return &mcp.IOTransport{
		Reader: &dupKeyReader{src: bufio.NewReaderSize(in, 64<<10), out: w, limit: mcp.DefaultMaxLineLength},
		Writer: w,
	}
}

// lockedWriter serialises writes: the SDK's answers and the refusals of
// dupKeyReader, each written whole by one Write, never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (*lockedWriter) Close() error { return nil }

// dupKeyReader hands the SDK the input one message at a time, after checking
// it. A message is the lines up to one that completes a JSON value (the MCP
// stdio transport puts one message on a line; a value spread over lines is
// checked whole too). What is not one valid JSON value (a syntax error, trailing
// data) goes on unchecked, for the SDK to answer as it does; so does the rest of
// the line of a message longer than limit, which the SDK refuses.
type dupKeyReader struct {
	src     *bufio.Reader
	out     io.Writer
	limit   int
	frame   []byte // the lines of a message not yet complete
	pending []byte // checked input the SDK has not read yet
	pass    bool   // a line over limit: it goes on unchecked to its end
	depth   nesting
	err     error // the input's error, after pending
}

func (r *dupKeyReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.next()
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

func (*dupKeyReader) Close() error { return nil }

// next reads one line and decides what becomes of the message so far.
func (r *dupKeyReader) next() {
	if r.pass {
		line, err := r.src.ReadSlice('\n')
		r.pending = append([]byte(nil), line...)
		switch {
		case err == nil:
			r.pass = false // the next line starts a message
		case !errors.Is(err, bufio.ErrBufferFull):
			r.err = err
		}
		return
	}
	line, err := r.src.ReadSlice('\n')
	r.frame = append(r.frame, line...)
	r.depth.feed(line)
	switch {
	case len(r.frame) > r.limit:
		r.release()
		r.pass = true
		return
	case errors.Is(err, bufio.ErrBufferFull):
		return // the line goes on
	case err == nil && !r.depth.closed():
		return // inside an object, array or string: the message goes on
	}
	if json.Valid(r.frame) && r.refuse() {
		r.frame, r.depth = r.frame[:0], nesting{}
	} else {
		r.release() // a message, white space, or what the SDK is to refuse
	}
	if err != nil {
		r.err = err // the end of the input (or its failure), after what came before
	}
}

// release hands the message so far to the SDK.
func (r *dupKeyReader) release() {
	r.pending, r.frame = r.frame, nil
	r.depth = nesting{}
}

// nesting follows the brackets and strings of the lines of a message, so that
// only a line that may end it is parsed: a value spread over many lines costs
// one pass, not one per line.
type nesting struct {
	depth      int
	inStr, esc bool
}

func (n *nesting) feed(b []byte) {
	for _, c := range b {
		switch {
		case n.esc:
			n.esc = false
		case n.inStr:
			n.esc = c == '\\'
			n.inStr = c != '"'
		case c == '"':
			n.inStr = true
		case c == '{' || c == '[':
			n.depth++
		case c == '}' || c == ']':
			n.depth--
		}
	}
}

// closed reports whether the message so far may be a whole value: outside any
// string, object or array (a stray closing bracket counts as closed too).
func (n *nesting) closed() bool { return !n.inStr && n.depth <= 0 }

// refuse answers the message with an Invalid Request error when it gives a key
// twice in one object, and reports whether it did.
func (r *dupKeyReader) refuse() bool {
	var e *httpserver.Error
	if err := httpserver.DuplicateKey(r.frame); !errors.As(err, &e) {
		return false
	}
	b, err := invalidRequest(messageID(r.frame, e.Field), e.Field, e.Detail)
	if err != nil {
		b = []byte(internalRPCError)
	}
	if _, err := r.out.Write(append(b, '\n')); err != nil {
		r.err = err // the client is gone: the session ends
	}
	return true
}

// messageID is the id of the message in data when it can be trusted: data is
// one message (an object, not a batch), the key given twice (dup) is not its id,
// and the id is a string or a number. Otherwise nil (null).
func messageID(data []byte, dup string) json.RawMessage {
	if dup == "id" {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(data, &m) != nil {
		return nil
	}
	id := m["id"]
	if len(id) == 0 || !(id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		return nil
	}
	return id
}
