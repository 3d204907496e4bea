package mcpserver

import (
	"context"
	"log/slog"
)

// clientMistakes are the messages the MCP SDK logs at ERROR for a client's protocol
// mistake (a call before initialize, a repeated initialize, ...): the client gets
// its error answer, and the server's log keeps ERROR for the server's own faults,
// as pkg/httpserver logs a rejected request at DEBUG.
var clientMistakes = map[string]bool{
	"method invalid during initialization": true,
	"initialized before initialize":        true,
	"duplicate initialized notification":   true,
	"duplicate initialize request":         true,
	"method removed in the new protocol":   true,
}

// sdkLogHandler demotes clientMistakes to DEBUG and passes every other record on.
type sdkLogHandler struct{ next slog.Handler }

func (h sdkLogHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h sdkLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && clientMistakes[r.Message] {
		r.Level = slog.LevelDebug
		if !h.next.Enabled(ctx, r.Level) {
			return nil
		}
	}
	return h.next.Handle(ctx, r)
}

func (h sdkLogHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return sdkLogHandler{h.next.WithAttrs(a)}
}

func (h sdkLogHandler) WithGroup(name string) slog.Handler {
	return sdkLogHandler{h.next.WithGroup(name)}
}

// sdkLogger is the logger handed to the SDK.
func sdkLogger(l *slog.Logger) *slog.Logger { return slog.New(sdkLogHandler{l.Handler()}) }
