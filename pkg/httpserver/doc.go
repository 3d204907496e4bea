// Package httpserver is the skeleton shared by the kgsearch services: gin mounted
// behind our own http.Server, JSON logs with request IDs, Prometheus metrics per
// route, RFC 9457 problem responses, request body limits, optional bearer API keys
// for mutating endpoints, /healthz and /readyz, and graceful shutdown.
//
// # Errors
//
// Handlers return errors instead of writing them: wrap a handler with [Server.Handle]
// and return an error. One place, [Server.writeError], maps errors to problem
// documents, so the three services answer the same mistake the same way:
//
//   - an [*Error] as it is (built with [BadRequest], [NotFound], [Conflict],
//     [Unavailable], [Timeout], [Internal] or by hand);
//   - a body over MaxBodyBytes (*http.MaxBytesError) as 413;
//   - a [*fielderr.Error], the one field-error type of the repository (returned by
//     pkg/store, search's pipeline, the crawler's engine), as 400 whose field
//     member names the field and whose detail is the reason;
//   - a context deadline (context.DeadlineExceeded) as 503 with Retry-After;
//   - a cancellation (context.Canceled) after the client went away (the request's
//     context is done) as [StatusClientClosed], 499 in the request log and
//     metrics, with a debug line only: nobody reads the answer, and a client that
//     gave up is not a server failure;
//   - anything else as 500, whose text is logged and never shown.
//
// Request bodies are read with [DecodeJSON], which refuses unknown fields, a key
// given twice in one object (encoding/json would keep the last value silently), wrong
// types, invalid JSON, an empty body and trailing values with a 400 naming the field;
// [JSONContentType] answers 415 to a body declared as another media type.
// [DuplicateKey] is the duplicate-key check alone, for bodies another decoder
// reads (pkg/mcpserver's JSON-RPC messages).
// URL queries are read with [StrictQuery], which refuses what url.Values would let
// pass silently: bad URL encoding, unknown parameters (with a did-you-mean) and a
// single-valued parameter given twice. [Acceptable] answers 406 to an Accept header
// naming none of the media types a handler writes.
//
// A context deadline is a 503, not a 504: the services are origins, not gateways,
// and a deadline means a dependency (MariaDB, Neo4j, the model, the kg service) did
// not answer in time, a transient state the client should retry after a pause, as
// it retries any other 503. Clients (pkg/kgapi, search's kg calls, load balancers)
// therefore need to treat only 503 + Retry-After as "retry later". The crawler used
// 504 before the services shared this mapping.
//
// # Requests before the handler
//
// Every answer carries X-Request-ID and X-Content-Type-Options: nosniff. A service
// without API keys answers a loopback peer only when the Host header names this
// machine (127.0.0.1, [::1], localhost, *.localhost); any other Host is a 421
// naming Host, which stops a web page that rebinds its own name to 127.0.0.1 from
// driving a keyless development stack from the browser (checkHost). Rate limits
// bucket a client by API key, else by address: an IPv4 address or an IPv6 /64.
//
// /readyz runs its checks at most once a second, concurrent requests sharing the
// run, and, when the service has API keys, tells a request without one only each
// check's state (ok, starting, degraded, unavailable), not the error text, which
// names internal addresses and users.
//
// # Methods
//
// [Server.Handler], what Run serves, answers HEAD on every GET route with the
// GET's status and headers and no body; OPTIONS on an existing path is 204 with
// Allow; another method is 405 with Allow. Metrics label methods outside the
// standard set as OTHER, so made-up methods cannot add series.
package httpserver
