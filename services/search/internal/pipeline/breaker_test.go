package pipeline

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1000, 0)}
	b := newBreaker(3, time.Second)
	b.now = clock.now
	ctx := context.Background()
	down := fmt.Errorf("match entities: %w: connection refused", kgapi.ErrUnavailable)
	calls := 0
	call := func(err error) error {
		_, e := guard(ctx, b, func(context.Context, int) (int, error) { calls++; return 0, err }, 0)
		return e
	}
	// A 4xx answer and a caller that went away are not kg failures.
	for range 5 {
		_ = call(&kgapi.StatusError{Status: 400})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	for range 5 {
		ok, probe := b.allow()
		b.record(cctx, context.Canceled, probe)
		if !ok {
			t.Fatal("closed breaker refused a call")
		}
	}
	if b.open() {
		t.Fatal("opened on 4xx answers or cancelled callers")
	}
	for range 3 {
		_ = call(down)
	}
	if !b.open() || calls != 8 {
		t.Fatalf("after 3 failures: open %v, calls %d; want open, 8", b.open(), calls)
	}
	// Open: calls fail at once without reaching kg.
	if err := call(nil); !errors.Is(err, ErrCircuitOpen) || !errors.Is(err, kgapi.ErrUnavailable) || calls != 8 {
		t.Fatalf("open: got %v after %d calls", err, calls)
	}
	// After the cooldown one probe goes through; it fails, so the circuit stays open.
	clock.t = clock.t.Add(time.Second)
	if err := call(down); !errors.Is(err, down) || calls != 9 {
		t.Fatalf("probe: got %v after %d calls", err, calls)
	}
	if err := call(nil); !errors.Is(err, ErrCircuitOpen) || calls != 9 {
		t.Fatalf("after a failed probe: got %v after %d calls", err, calls)
	}
	// While a probe is out, other calls still fail fast.
	clock.t = clock.t.Add(time.Second)
	ok, probe := b.allow()
	if !ok || !probe {
		t.Fatal("no probe after the cooldown")
	}
	if ok2, _ := b.allow(); ok2 {
		t.Fatal("a second call went through beside the probe")
	}
	b.record(ctx, nil, true) // the probe succeeded: closed
	if b.open() || call(nil) != nil || calls != 10 {
		t.Fatalf("after a good probe: open %v, calls %d", b.open(), calls)
	}
	// A slow kg (no answer within the budget) counts as a failure.
	for range 3 {
		_ = call(context.DeadlineExceeded)
	}
	if !b.open() {
		t.Error("timeouts did not open the circuit")
	}
}

type retrieverGraph struct{ Graph }

func (retrieverGraph) Retrieve(context.Context, kgapi.RetrieveRequest) (*kgapi.RetrieveResponse, error) {
	return nil, nil
}

func TestGuardKeepsTheRetrieveCall(t *testing.T) {
	if _, ok := New(nil, nil, nil, retrieverGraph{}, nil, nil, nil, Options{}, nil, nil).kg.(Retriever); !ok {
		t.Error("a kg client with Retrieve lost it behind the breaker")
	}
	var plain struct{ Graph }
	if _, ok := New(nil, nil, nil, plain, nil, nil, nil, Options{}, nil, nil).kg.(Retriever); ok {
		t.Error("a kg client without Retrieve gained it")
	}
}
