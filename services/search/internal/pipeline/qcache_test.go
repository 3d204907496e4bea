package pipeline

import (
	"fmt"
	"testing"
)

func TestQueryVectorsLRU(t *testing.T) {
	c := newQueryVectors(2)
	in := []float32{1, 2}
	c.put("a", in)
	in[0] = 9 // the cache keeps its own copy
	c.put("b", []float32{3})
	if v, ok := c.get("a"); !ok || v[0] != 1 { // a is now the most recent
		t.Fatalf("get a: %v %v", v, ok)
	}
	c.put("c", []float32{4}) // evicts b, the least recently used
	if _, ok := c.get("b"); ok {
		t.Error("b survived eviction")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s evicted", k)
		}
	}
	if c.len() != 2 {
		t.Errorf("len %d, want 2", c.len())
	}
	for i := range 100 {
		c.put(fmt.Sprint(i), []float32{float32(i)})
	}
	if v, ok := c.get("99"); c.len() != 2 || !ok || v[0] != 99 {
		t.Errorf("after 100 puts: len %d, 99 → %v %v", c.len(), v, ok)
	}
}
