package toon_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/toon"
	"github.com/kgsearch/kgsearch/pkg/toon/sample"
)

// reportCPU adds the process CPU time per operation as cpu-ns/op.
func reportCPU(b *testing.B, start time.Duration) {
	if start == 0 || b.N == 0 {
		return
	}
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
}

type benchCase struct {
	name string
	val  any
	into func() any // fresh target for Unmarshal
}

func benchCases() []benchCase {
	return []benchCase{
		{"search50", sample.Search(50), func() any { return new(sample.SearchResponse) }},
		{"table1000", sample.Table(1000), func() any { return new([]sample.Row) }},
		{"config", sample.Config(), func() any { return new(map[string]any) }},
	}
}

func BenchmarkMarshal(b *testing.B) {
	for _, c := range benchCases() {
		tb, err := toon.Marshal(c.val)
		if err != nil {
			b.Fatal(err)
		}
		jb, err := json.Marshal(c.val)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/toon", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tb)))
			start := processCPU()
			for b.Loop() {
				if _, err := toon.Marshal(c.val); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
		b.Run(c.name+"/json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(jb)))
			start := processCPU()
			for b.Loop() {
				if _, err := json.Marshal(c.val); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	for _, c := range benchCases() {
		tb, err := toon.Marshal(c.val)
		if err != nil {
			b.Fatal(err)
		}
		jb, err := json.Marshal(c.val)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/toon", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tb)))
			start := processCPU()
			for b.Loop() {
				if err := toon.Unmarshal(tb, c.into()); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
		b.Run(c.name+"/json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(jb)))
			start := processCPU()
			for b.Loop() {
				if err := json.Unmarshal(jb, c.into()); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkFromJSON converts JSON text to TOON.
func BenchmarkFromJSON(b *testing.B) {
	for _, c := range benchCases() {
		jb, err := json.Marshal(c.val)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/toon", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(jb)))
			start := processCPU()
			for b.Loop() {
				if _, err := toon.FromJSON(jb); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}

// BenchmarkToJSON converts TOON text to JSON.
func BenchmarkToJSON(b *testing.B) {
	for _, c := range benchCases() {
		tb, err := toon.Marshal(c.val)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/toon", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(tb)))
			start := processCPU()
			for b.Loop() {
				if _, err := toon.ToJSON(tb); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, start)
		})
	}
}
