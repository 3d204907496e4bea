package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/pkg/httpserver"
)

// maxBody bounds a POSTed JSON-RPC body, here and in the SDK behind (its
// default). The search service's own limit (MaxBodyBytes) applies first.
const maxBody = mcp.DefaultMaxRequestBodyBytes

// refuseDuplicateKeys answers a POST whose body is valid JSON but gives a key
// twice in one object (at any depth, in any message of a batch) with 400 and a
// JSON-RPC Invalid Request error naming the key's path, before next (the SDK)
// reads it: the SDK's decoder keeps the last value silently, so
// "arguments":{"q":"a","q":"b"} would search for b. The REST routes refuse the
// same bodies (httpserver.DecodeJSON). The SDK reads the body's first JSON value
// and ignores what follows it, so that value is the one checked, whatever comes
// after. A batch of more than maxBatch messages or more than one tools/call is
// refused the same way (checkBatch). A JSON body (by its Content-Type) that is
// not JSON is answered with a JSON-RPC Parse error (-32700, id null), as the
// stdio transport answers such a line; the SDK answered it in plain text. Any
// other body goes on to the SDK as it was sent.
func refuseDuplicateKeys(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeRPCError(w, http.StatusRequestEntityTooLarge, "",
					fmt.Sprintf("the request body exceeds %d bytes; send a smaller message", mbe.Limit))
				return
			}
			writeRPCError(w, http.StatusBadRequest, "", "the request body could not be read: "+err.Error())
			return
		}
		v, perr := firstValue(data)
		if perr != nil && jsonBody(r) && len(bytes.TrimSpace(data)) > 0 {
			b, err := rpcErrorJSON(jsonrpc.CodeParseError, nil, "", "parse error: the body is not JSON ("+perr.Error()+"); send one JSON-RPC message or a batch")
			if err != nil {
				b = []byte(internalRPCError)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write(b)
			return
		}
		if v != nil {
			var e *httpserver.Error
			if err := httpserver.DuplicateKey(v); errors.As(err, &e) {
				writeRPCError(w, http.StatusBadRequest, e.Field, e.Detail)
				return
			}
			if field, msg := checkBatch(v); msg != "" {
				writeRPCError(w, http.StatusBadRequest, field, msg)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		next.ServeHTTP(w, r)
	})
}

// maxBatch is the most messages a JSON-RPC batch may hold.
const maxBatch = 10

// checkBatch refuses a JSON-RPC batch (protocol versions before 2025-06-18, or a
// request without the MCP-Protocol-Version header, which the SDK reads as
// 2025-03-26) of more than maxBatch messages or with more than one tools/call,
// returning the field at fault ("" for the batch) and what to do. The search
// service's rate limit counts a POST to /mcp as one search and the tools call its
// API in process, where nothing limits them again: one batch of thousands of
// searches would have cost one request of the limit. A body that is not a batch,
// or not one the SDK can read, passes.
func checkBatch(v json.RawMessage) (field, msg string) {
	var batch []struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(v, &batch) != nil {
		return "", ""
	}
	if len(batch) > maxBatch {
		return "", fmt.Sprintf("a batch holds at most %d messages, this one %d; send the rest in further requests", maxBatch, len(batch))
	}
	calls := 0
	for i, m := range batch {
		if m.Method != "tools/call" {
			continue
		}
		if calls++; calls > 1 {
			return fmt.Sprintf("[%d].method", i), "a batch holds at most one tools/call; send each further tool call in a request of its own"
		}
	}
	return "", ""
}

// firstValue is the JSON value at the start of data (after white space), as a
// decoder reads it, or nil and the decoder's error when there is none.
func firstValue(data []byte) (json.RawMessage, error) {
	var v json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// jsonBody reports whether r says its body is JSON (application/json), the only
// type the SDK reads; it refuses the others itself (415).
func jsonBody(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// rpcError is a JSON-RPC 2.0 error response to a request that cannot be read.
// Over HTTP its id is null, as the specification asks when the id cannot be
// determined (a duplicated key may be the id itself); the answer is the POST's
// response, so the client knows what it answers. Over stdio, where a client
// matches answers to requests by id alone, it carries the message's id when
// that was given once (StdioTransport).
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"` // nil: null
	Error   rpcFault        `json:"error"`
}

type rpcFault struct {
	Code    int64          `json:"code"`
	Message string         `json:"message"`
	Data    *rpcFaultField `json:"data,omitempty"`
}

// rpcFaultField names the member at fault, as the REST problems' field does.
type rpcFaultField struct {
	Field string `json:"field"`
}

// writeRPCError answers status with an Invalid Request error saying msg; field,
// when not empty, names the member at fault in the error's data.
func writeRPCError(w http.ResponseWriter, status int, field, msg string) {
	b, err := invalidRequest(nil, field, msg)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(internalRPCError)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// internalRPCError answers when an error response cannot be encoded.
const internalRPCError = `{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`

// invalidRequest encodes a JSON-RPC Invalid Request error with id (nil: null)
// saying msg; field, when not empty, names the member at fault in its data.
func invalidRequest(id json.RawMessage, field, msg string) ([]byte, error) {
	return rpcErrorJSON(jsonrpc.CodeInvalidRequest, id, field, msg)
}

// rpcErrorJSON encodes a JSON-RPC error response with code, id (nil: null) and
// msg; field, when not empty, names the member at fault in its data.
func rpcErrorJSON(code int64, id json.RawMessage, field, msg string) ([]byte, error) {
	body := rpcError{JSONRPC: "2.0", ID: id, Error: rpcFault{Code: code, Message: msg}}
	if field != "" {
		body.Error.Data = &rpcFaultField{Field: field}
	}
	return json.Marshal(body)
}
