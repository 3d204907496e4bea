package toon_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/toon"
)

// TestConcurrentUse runs the codec from many goroutines so that the race
// detector sees the type caches and buffer pools under contention.
func TestConcurrentUse(t *testing.T) {
	values := differentialValues()
	want := map[string]string{}
	for name, v := range values {
		b, err := toon.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		want[name] = string(b)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				for name, v := range values {
					b, err := toon.Marshal(v)
					if err != nil {
						errs <- err
						return
					}
					if string(b) != want[name] {
						errs <- fmt.Errorf("%s: concurrent Marshal differs", name)
						return
					}
					var back any
					if err := toon.Unmarshal(b, &back); err != nil {
						errs <- fmt.Errorf("%s: %w", name, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
