package mcpserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"time"
)

// maxDrain bounds how long the stdio transport, its input ended, waits for the
// answers of the requests it handed the SDK (a crawl tool call waits for its job
// up to wait_seconds, 600 by default).
const maxDrain = 15 * time.Minute

// inflight tracks the requests of a stdio session that have not been answered:
// the reader adds each request it hands the SDK, the writer removes each one
// the SDK (or the reader's own refusals) answers. At the end of the input the
// reader waits for it to empty before it reports the end, because the SDK ends
// the session there and drops the answers of calls still running: `printf
// '...initialize...\n...tools/call...\n' | kgs mcp` printed nothing.
type inflight struct {
	mu      sync.Mutex
	ids     map[string]struct{}
	changed chan struct{} // closed and replaced whenever ids shrinks
	closed  chan struct{} // closed by the transport's Close: stop waiting
	once    sync.Once
}

func newInflight() *inflight {
	return &inflight{ids: map[string]struct{}{}, changed: make(chan struct{}), closed: make(chan struct{})}
}

// sent records the requests in msg (a message or a batch) handed to the SDK,
// and forgets those a notifications/cancelled names (the SDK may not answer them).
func (f *inflight) sent(msg []byte) {
	f.each(msg, func(m rpcProbe) {
		switch {
		case m.Method == "notifications/cancelled" && m.Params != nil:
			f.done(m.Params.RequestID)
		case m.Method != "" && len(m.ID) > 0:
			if k, ok := idKey(m.ID); ok {
				f.mu.Lock()
				f.ids[k] = struct{}{}
				f.mu.Unlock()
			}
		}
	})
}

// answered forgets the requests msg (one written line: a response or a batch
// of them) answers.
func (f *inflight) answered(msg []byte) {
	f.each(msg, func(m rpcProbe) {
		if m.Method == "" && (m.Result != nil || m.Error != nil) {
			f.done(m.ID)
		}
	})
}

func (f *inflight) done(id json.RawMessage) {
	k, ok := idKey(id)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.ids[k]; ok {
		delete(f.ids, k)
		close(f.changed)
		f.changed = make(chan struct{})
	}
}

// wait returns when every request handed to the SDK has been answered, the
// transport is closed, or after limit.
func (f *inflight) wait(limit time.Duration) {
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		n, changed := len(f.ids), f.changed
		f.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-f.closed:
			return
		case <-timeout.C:
			return
		}
	}
}

func (f *inflight) close() { f.once.Do(func() { close(f.closed) }) }

// rpcProbe is what inflight reads of a JSON-RPC message.
type rpcProbe struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Params *struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// each calls fn for the message, or each message of the batch, in msg.
func (f *inflight) each(msg []byte, fn func(rpcProbe)) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 {
		return
	}
	if msg[0] == '[' {
		var batch []rpcProbe
		if json.Unmarshal(msg, &batch) == nil {
			for _, m := range batch {
				fn(m)
			}
		}
		return
	}
	var m rpcProbe
	if json.Unmarshal(msg, &m) == nil {
		fn(m)
	}
}

// idKey is a request id as the SDK compares it: a string, or a number (1 and
// 1.0 are one id). Other values (null, objects) are not request ids.
func idKey(id json.RawMessage) (string, bool) {
	var v any
	if len(id) == 0 || json.Unmarshal(id, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return "s" + v, true
	case float64:
		return "n" + strconv.FormatFloat(v, 'g', -1, 64), true
	}
	return "", false
}
