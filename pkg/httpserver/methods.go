package httpserver

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// Handler is the server's HTTP handler: the gin engine, with HEAD answered for
// every GET route (RFC 9110 §9.3.2: the GET's status and headers without the body;
// load balancers and uptime monitors probe /healthz with HEAD). Run and Serve use
// it; tests that call Engine() directly see gin alone.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodHead {
			s.engine.ServeHTTP(w, r)
			return
		}
		// A copy, so that net/http still sees a HEAD on its own request and sends no
		// body; the writer drops the body for any other ResponseWriter too.
		get := r.Clone(context.WithValue(r.Context(), headKey{}, true))
		get.Method = http.MethodGet
		s.engine.ServeHTTP(headWriter{w}, get)
	})
}

type headKey struct{}

// requestMethod is the method the client sent: HEAD for a HEAD served as GET.
func requestMethod(r *http.Request) string {
	if head, _ := r.Context().Value(headKey{}).(bool); head {
		return http.MethodHead
	}
	return r.Method
}

// headWriter discards the body of a HEAD answer.
type headWriter struct{ http.ResponseWriter }

func (h headWriter) Write(b []byte) (int, error) { return len(b), nil }

// Flush passes a streaming handler's flush on (the headers of an event stream).
func (h headWriter) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (h headWriter) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// knownMethods are the methods a metric label may carry; any other method is
// counted as OTHER, so that a client sending made-up methods cannot grow the
// metric series without bound.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// methodLabel is the method as a bounded metric label.
func methodLabel(m string) string {
	if knownMethods[m] {
		return m
	}
	return "OTHER"
}

// noMethod answers a path that exists with another method: OPTIONS gets 204 with
// Allow (the methods the path has, and HEAD with GET), anything else 405 with the
// same Allow and a problem document.
func (s *Server) noMethod(c *gin.Context) {
	allow := c.Writer.Header().Get("Allow")
	if strings.Contains(allow, http.MethodGet) && !strings.Contains(allow, http.MethodHead) {
		allow += ", " + http.MethodHead
	}
	if allow != "" {
		allow += ", " + http.MethodOptions
		c.Header("Allow", allow)
	}
	if c.Request.Method == http.MethodOptions {
		c.Status(http.StatusNoContent)
		c.Writer.WriteHeaderNow()
		c.Abort()
		return
	}
	s.writeError(c, &Error{Status: http.StatusMethodNotAllowed, Title: "method not allowed",
		Detail: clipMethod(requestMethod(c.Request)) + " is not supported on " + c.Request.URL.Path + "; use " + allow})
}

// clipMethod shortens a made-up method quoted back to the client.
func clipMethod(m string) string {
	if len(m) > 20 {
		return m[:20] + "…"
	}
	return m
}
