package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// StdioTransport is the SDK's stdio transport (newline-delimited JSON-RPC) over
// in and out with the check HTTPHandler makes: a message that gives a key twice
// in one object (at any depth, in any message of a batch) never reaches the SDK,
// whose decoder would keep the last value. It is answered on out with the
// JSON-RPC Invalid Request error the HTTP endpoint sends, naming the key's path
// in the message and data.field, and the session goes on with the next message.
// Each JSON value of a line is checked, as the SDK serves each (several on one
// line, apart by a carriage return, are several messages to its decoder). The
// answer carries the message's id when that was given once (a number or a
// string, in a request that is not a batch), so the client's call ends with the
// error instead of waiting; otherwise its id is null. A line that is not JSON
// (from the first thing on it that is not a valid value to its end) is answered
// with a JSON-RPC Parse error (-32700, id null) and kept from the SDK, whose
// decoder would end the session at it, losing the answers of the calls still
// running; the session goes on with the next line. A message longer than the
// SDK's limit (mcp.DefaultMaxLineLength) is answered with an Invalid Request
// error and ends the session, as the SDK ends it. Every other input reaches the
// SDK byte for byte, as it was sent. When the input ends, the end reaches the
// SDK (which ends the session) only after the requests it was handed have been
// answered, or after maxDrain, so that piping requests into `kgs mcp` prints
// their answers. Closing the transport closes neither in nor out.
func StdioTransport(in io.Reader, out io.Writer) *mcp.IOTransport {
	f := newInflight()
	w := &lockedWriter{w: out, flight: f}
	return &mcp.IOTransport{
		Reader: &dupKeyReader{src: bufio.NewReaderSize(in, 64<<10), out: w, limit: mcp.DefaultMaxLineLength, flight: f},
		Writer: w,
	}
}

// lockedWriter serialises writes: the SDK's answers and the refusals of
// dupKeyReader, each written whole by one Write, never interleave. It tells
// flight (when set) which requests each write answers.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	flight *inflight
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if l.flight != nil && err == nil {
		l.flight.answered(p)
	}
	return n, err
}

func (*lockedWriter) Close() error { return nil }

// dupKeyReader hands the SDK the input one message at a time, after checking
// it. It reads the lines up to one that may complete a JSON value (the MCP stdio
// transport puts one message on a line; a value spread over lines is checked
// whole too), then checks each JSON value in them as the SDK's decoder will read
// it: a line may hold several, apart by white space such as a carriage return,
// and the SDK serves each. From what is not a valid JSON value on a complete line
// (a syntax error) to the line's end, the input is answered with a Parse error
// and dropped; a value cut short by the end of the input goes on unchecked, for
// the SDK to refuse as it does. A message longer than limit, which the SDK
// would refuse too, ends the input with errMessageTooLarge after an Invalid
// Request error saying so: none of it reaches the SDK unchecked.
type dupKeyReader struct {
	src     *bufio.Reader
	out     io.Writer
	limit   int
	frame   []byte // the lines of a message not yet complete
	pending []byte // checked input the SDK has not read yet
	depth   nesting
	err     error     // the input's error, after pending
	flight  *inflight // the requests handed to the SDK and not yet answered (nil: not tracked)
	drained bool      // the end of the input waited for flight once
}

// errMessageTooLarge ends the input of a session sent a message over the limit.
var errMessageTooLarge = errors.New("a message exceeds the length limit")

func (r *dupKeyReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		if r.err != nil {
			if r.flight != nil && !r.drained && errors.Is(r.err, io.EOF) {
				r.drained = true
				r.flight.wait(maxDrain) // the SDK ends the session at the end of its input
			}
			return 0, r.err
		}
		r.next()
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// Close ends a wait for answers at the end of the input; in stays open.
func (r *dupKeyReader) Close() error {
	if r.flight != nil {
		r.flight.close()
	}
	return nil
}

// next reads one line and decides what becomes of the message so far.
func (r *dupKeyReader) next() {
	line, err := r.src.ReadSlice('\n')
	r.frame = append(r.frame, line...)
	r.depth.feed(line)
	// More is to come: the line goes on, or the message goes on inside an object,
	// array or string.
	if errors.Is(err, bufio.ErrBufferFull) || err == nil && !r.depth.closed() {
		if len(r.frame) > r.limit {
			r.tooLarge()
		}
		return
	}
	r.settle(err != nil)
	if err != nil {
		r.err = err // the end of the input (or its failure), after what came before
	}
}

// settle hands the SDK the values of the complete lines in frame and the white
// space around them, less each value it refuses. From the first thing that is
// not a valid value on, the rest is answered with a Parse error and dropped, or,
// at the end of the input (ended), goes on unchecked.
func (r *dupKeyReader) settle(ended bool) {
	rest := r.frame
	for len(rest) > 0 {
		dec := json.NewDecoder(bytes.NewReader(rest))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if !ended && len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
				r.parseError(err)
				rest = nil
			}
			break // white space, or a value the end of the input cut short
		}
		end := int(dec.InputOffset())
		keep := end // the white space before the value and the value
		if r.refuse(rest[:end]) {
			keep = 0
			if start := end - len(v); start >= 0 && bytes.Equal(rest[start:end], v) {
				keep = start // the white space before it stays
			}
		}
		r.pending = append(r.pending, rest[:keep]...)
		if keep == end && r.flight != nil {
			r.flight.sent(v)
		}
		rest = rest[end:]
		if keep < end && len(bytes.TrimLeft(rest, " \t\r\n")) == 0 {
			rest = nil // a refused message's line ends with it
		}
	}
	r.pending = append(r.pending, rest...)
	r.frame, r.depth = r.frame[:0], nesting{}
}

// parseError answers a line that is not JSON with a JSON-RPC Parse error (id
// null: no id can be read from it), saying what is wrong with it.
func (r *dupKeyReader) parseError(err error) {
	b, merr := rpcErrorJSON(jsonrpc.CodeParseError, nil, "",
		"parse error: the line is not JSON ("+err.Error()+"); send one JSON-RPC message per line")
	if merr != nil {
		b = []byte(internalRPCError)
	}
	if _, err := r.out.Write(append(b, '\n')); err != nil {
		r.err = err // the client is gone: the session ends
	}
}

// tooLarge answers a message longer than the limit with an Invalid Request
// error and ends the input: the SDK reads none of it.
func (r *dupKeyReader) tooLarge() {
	b, err := invalidRequest(nil, "", fmt.Sprintf("a message exceeds %d bytes; send a smaller one", r.limit))
	if err != nil {
		b = []byte(internalRPCError)
	}
	_, _ = r.out.Write(append(b, '\n'))
	r.frame, r.depth, r.err = nil, nesting{}, errMessageTooLarge
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

// refuse answers msg, one JSON value, with an Invalid Request error when it
// gives a key twice in one object, and reports whether it did.
func (r *dupKeyReader) refuse(msg []byte) bool {
	var e *httpserver.Error
	if err := httpserver.DuplicateKey(msg); !errors.As(err, &e) {
		return false
	}
	b, err := invalidRequest(messageID(msg), e.Field, e.Detail)
	if err != nil {
		b = []byte(internalRPCError)
	}
	if _, err := r.out.Write(append(b, '\n')); err != nil {
		r.err = err // the client is gone: the session ends
	}
	return true
}

// messageID is the id of msg when an answer may carry it: msg is a request (an
// object, not a batch, with a method: a response's id is one the server chose),
// it gives "id" once, and the id is a string or a number. Otherwise nil (null).
func messageID(msg []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var id json.RawMessage
	ids, method := 0, false
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		switch key {
		case "id":
			ids, id = ids+1, v
		case "method":
			method = true
		}
	}
	if ids != 1 || !method || len(id) == 0 || !(id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		return nil
	}
	return id
}
