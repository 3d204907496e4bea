package admission

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestLimiterAdmitsQueuesAndRefuses(t *testing.T) {
	reg := prometheus.NewRegistry()
	l := New(Options{MaxInFlight: 2, MaxQueue: 1, MaxWait: time.Hour, RetryAfter: 1500 * time.Millisecond}, reg)
	ctx := context.Background()
	r1, err1 := l.Acquire(ctx)
	r2, err2 := l.Acquire(ctx)
	if err1 != nil || err2 != nil {
		t.Fatalf("free slots: %v, %v", err1, err2)
	}
	// A third search waits for a slot.
	got := make(chan error, 1)
	go func() {
		r, err := l.Acquire(ctx)
		if err == nil {
			defer r()
		}
		got <- err
	}()
	for l.waiting.Load() != 1 {
		time.Sleep(time.Millisecond)
	}
	// The queue (1) is full: a fourth is refused at once.
	_, err := l.Acquire(ctx)
	var se *SaturatedError
	if !errors.As(err, &se) || se.Queued || !errors.Is(err, ErrSaturated) || se.RetryAfterSeconds() != 2 || se.InFlight != 2 {
		t.Fatalf("queue full: got %v (%+v), want a SaturatedError, not queued, Retry-After 2", err, se)
	}
	r1() // frees a slot for the waiting search
	if err := <-got; err != nil {
		t.Fatalf("queued search: %v", err)
	}
	r2()
	if n := testutil.ToFloat64(l.met.rejected.WithLabelValues("queue_full")); n != 1 {
		t.Errorf("queue_full refusals: %v, want 1", n)
	}
}

func TestLimiterWaitTimesOut(t *testing.T) {
	l := New(Options{MaxInFlight: 1, MaxQueue: 4, MaxWait: 10 * time.Millisecond}, nil)
	ctx := context.Background()
	release, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Acquire(ctx)
	var se *SaturatedError
	if !errors.As(err, &se) || !se.Queued || se.RetryAfterSeconds() != 1 {
		t.Fatalf("wait: got %v, want a SaturatedError after queueing", err)
	}
	release()
	r, err := l.Acquire(ctx)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	r()
	if l.waiting.Load() != 0 || len(l.slots) != 0 {
		t.Errorf("leaked: waiting %d, slots %d", l.waiting.Load(), len(l.slots))
	}
}

func TestLimiterCallerGoesAway(t *testing.T) {
	l := New(Options{MaxInFlight: 1, MaxQueue: 1, MaxWait: time.Hour}, nil)
	release, _ := l.Acquire(context.Background())
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: got %v, want context.Canceled", err)
	}
}

func TestDefaultsFollowGOMAXPROCS(t *testing.T) {
	d := Defaults()
	if d.MaxInFlight < 4 || d.MaxQueue != d.MaxInFlight || d.MaxWait <= 0 {
		t.Errorf("defaults %+v", d)
	}
	if o := New(Options{}, nil).Options(); o != d {
		t.Errorf("zero options: %+v, want the defaults %+v", o, d)
	}
}
