// Package httpserver is the skeleton shared by the kgsearch services: gin mounted
// behind our own http.Server, JSON logs with request IDs, Prometheus metrics per
// route, RFC 9457 problem responses, request body limits, optional bearer API keys
// for mutating endpoints, /healthz and /readyz, and graceful shutdown.
//
// Handlers return errors instead of writing them: wrap a handler with [Handle] and
// return an [*Error] (or any error, which becomes a 500 whose text is logged, never
// shown). One place, [Server.writeError], maps errors to problem documents.
package httpserver
