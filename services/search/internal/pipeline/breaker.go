package pipeline

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// ErrCircuitOpen is the error of a kg call not made because recent calls failed: a
// kg that is down or stuck costs each search nothing instead of a full timeout. It
// wraps kgapi.ErrUnavailable.
var ErrCircuitOpen = circuitOpen{}

type circuitOpen struct{}

func (circuitOpen) Error() string        { return "kg circuit open: recent calls failed, retrying shortly" }
func (circuitOpen) Is(target error) bool { return target == kgapi.ErrUnavailable }

// breaker is a circuit breaker for the kg service. Closed, every call goes through;
// after Failures consecutive failures (kg unreachable, a 5xx or 429, or no answer
// within the call's budget) it opens: calls fail at once with ErrCircuitOpen for
// Cooldown, then one probe call goes through, which closes it on success and opens
// it again on failure. A 4xx answer or a caller that went away is not a failure of kg.
type breaker struct {
	failures int
	cooldown time.Duration
	now      func() time.Time

	mu        sync.Mutex
	fails     int
	openUntil time.Time // zero: closed
	probing   bool
}

func newBreaker(failures int, cooldown time.Duration) *breaker {
	return &breaker{failures: failures, cooldown: cooldown, now: time.Now}
}

// allow reports whether a call may go through, and whether it is the probe.
func (b *breaker) allow() (ok, probe bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.openUntil.IsZero():
		return true, false
	case b.now().Before(b.openUntil) || b.probing:
		return false, false
	}
	b.probing = true
	return true, true
}

// record counts a call's result.
func (b *breaker) record(ctx context.Context, err error, probe bool) {
	failed := err != nil && (errors.Is(err, kgapi.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)) &&
		!errors.Is(ctx.Err(), context.Canceled)
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	if !failed {
		b.fails, b.openUntil = 0, time.Time{}
		return
	}
	b.fails++
	if probe || b.fails >= b.failures {
		b.openUntil = b.now().Add(b.cooldown)
	}
}

// open reports whether the circuit is open (for tests and metrics).
func (b *breaker) open() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.openUntil.IsZero()
}

// guardedGraph is the kg client behind the breaker.
type guardedGraph struct {
	g Graph
	b *breaker
}

func guard[Req, Resp any](ctx context.Context, b *breaker, call func(context.Context, Req) (Resp, error), req Req) (Resp, error) {
	ok, probe := b.allow()
	if !ok {
		var zero Resp
		return zero, ErrCircuitOpen
	}
	resp, err := call(ctx, req)
	b.record(ctx, err, probe)
	return resp, err
}

func (g guardedGraph) Match(ctx context.Context, req kgapi.MatchRequest) (*kgapi.MatchResponse, error) {
	return guard(ctx, g.b, g.g.Match, req)
}

func (g guardedGraph) Expand(ctx context.Context, req kgapi.ExpandRequest) (*kgapi.ExpandResponse, error) {
	return guard(ctx, g.b, g.g.Expand, req)
}

func (g guardedGraph) Feedback(ctx context.Context, req kgapi.FeedbackRequest) (*kgapi.FeedbackResponse, error) {
	return guard(ctx, g.b, g.g.Feedback, req)
}

// guardedRetriever is guardedGraph for a kg client with the one-round-trip call,
// which it keeps (the expansion uses it when the client is a Retriever).
type guardedRetriever struct {
	guardedGraph
	rt Retriever
}

func (g guardedRetriever) Retrieve(ctx context.Context, req kgapi.RetrieveRequest) (*kgapi.RetrieveResponse, error) {
	return guard(ctx, g.b, g.rt.Retrieve, req)
}

// guarded puts kg behind a new breaker, keeping its Retrieve call when it has one.
func guarded(kg Graph, o Options) Graph {
	g := guardedGraph{g: kg, b: newBreaker(o.BreakerFailures, o.BreakerCooldown)}
	if rt, ok := kg.(Retriever); ok {
		return guardedRetriever{guardedGraph: g, rt: rt}
	}
	return g
}
