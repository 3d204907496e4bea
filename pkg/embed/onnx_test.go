package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// newTestONNX loads the installed model with cfg's non-zero fields applied.
func newTestONNX(t testing.TB, cfg Config) *ONNX {
	t.Helper()
	dir, lib := modelPaths(t)
	cfg.ModelDir, cfg.ORTLib = dir, lib
	if cfg.Threads == 0 {
		cfg.Threads = 2
	}
	e, err := NewONNX(cfg, nil)
	if err != nil {
		t.Fatalf("NewONNX: %v", err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// shared is one default-config model for the tests that do not close it or
// change its configuration (loading the model takes a second or more).
var shared struct {
	once sync.Once
	e    *ONNX
	err  error
}

func sharedONNX(t testing.TB) *ONNX {
	t.Helper()
	dir, lib := modelPaths(t)
	shared.once.Do(func() {
		shared.e, shared.err = NewONNX(Config{ModelDir: dir, ORTLib: lib, Threads: 2}, nil)
	})
	if shared.err != nil {
		t.Fatalf("NewONNX: %v", shared.err)
	}
	return shared.e
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d
}

func l2norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

var sampleTexts = []string{
	"How do I open a file in Python?",
	"Reading files with Python's open() function",
	"The recipe needs two cups of flour",
	"",
	"   ",
	"MariaDB stores vectors in a VECTOR(384) column with an HNSW index.",
	strings.Repeat("Neo4j keeps the entity graph; Bleve scores BM25. ", 12),
	"日本語のテキスト and Ünïcödé",
	"x",
	strings.Repeat("word ", 1000),
}

func TestONNXInfo(t *testing.T) {
	e := sharedONNX(t)
	if got, want := e.Info(), (Model{Name: "all-MiniLM-L6-v2", Dims: 384}); got != want {
		t.Errorf("Info() = %+v, want %+v", got, want)
	}
}

func TestONNXUnitVectors(t *testing.T) {
	e := sharedONNX(t)
	vecs, err := e.Embed(context.Background(), sampleTexts)
	if err != nil {
		t.Fatalf("Embed: %v", err)
	}
	if len(vecs) != len(sampleTexts) {
		t.Fatalf("got %d vectors, want %d", len(vecs), len(sampleTexts))
	}
	for i, v := range vecs {
		if len(v) != 384 {
			t.Errorf("text %d: got %d dimensions, want 384", i, len(v))
		}
		if n := l2norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("text %d: got norm %.7f, want 1", i, n)
		}
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				t.Fatalf("text %d: vector holds %v", i, x)
			}
		}
	}
}

// TestONNXSimilarity is the check that the real weights are loaded and wired
// right: a text scores closer to a paraphrase than to an unrelated text.
func TestONNXSimilarity(t *testing.T) {
	e := sharedONNX(t)
	triples := []struct{ anchor, related, unrelated string }{
		{"How do I open a file in Python?", "Reading files with Python's open() function", "The recipe needs two cups of flour"},
		{"How to cancel a running goroutine in Go", "Use context.Context cancellation to stop goroutines", "Tulips bloom in spring in the Netherlands"},
		{"The cat sat on the mat", "A kitten is resting on a rug", "Stock markets fell sharply on Monday"},
		{"Neo4j graph database query language", "Writing Cypher queries to traverse relationships in Neo4j", "She baked a chocolate cake for the birthday party"},
		{"nearest neighbour search over vectors", "approximate k-NN lookup with an HNSW index", "the football match ended in a draw"},
		{"The weather is sunny and warm today", "It is a bright, hot day", "Compile the kernel with make -j8"},
	}
	for _, tt := range triples {
		t.Run(tt.anchor, func(t *testing.T) {
			v, err := e.Embed(context.Background(), []string{tt.anchor, tt.related, tt.unrelated})
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			rel, unrel := Cosine(v[0], v[1]), Cosine(v[0], v[2])
			t.Logf("cos(anchor, related) = %.3f, cos(anchor, unrelated) = %.3f", rel, unrel)
			if rel <= unrel+0.1 {
				t.Errorf("cos(anchor, related) = %.3f, cos(anchor, unrelated) = %.3f: want related above unrelated by > 0.1", rel, unrel)
			}
		})
	}
}

func TestONNXBatchEqualsSingle(t *testing.T) {
	for _, cfg := range []Config{
		{},                                     // default: one long text per batch, short ones together
		{BatchSize: 32, BatchTokens: 32 * 256}, // all in one padded batch
		{BatchSize: 3, BatchTokens: 300},
	} {
		t.Run(fmt.Sprintf("batch=%d tokens=%d", cfg.BatchSize, cfg.BatchTokens), func(t *testing.T) {
			e := sharedONNX(t)
			if cfg.BatchSize > 0 {
				e = newTestONNX(t, cfg)
			}
			batch, err := e.Embed(context.Background(), sampleTexts)
			if err != nil {
				t.Fatalf("Embed(all): %v", err)
			}
			for i, text := range sampleTexts {
				one, err := e.Embed(context.Background(), []string{text})
				if err != nil {
					t.Fatalf("Embed(%d): %v", i, err)
				}
				if d := maxAbsDiff(batch[i], one[0]); d > 1e-5 {
					t.Errorf("text %d: batch and single differ by %g, want <= 1e-5", i, d)
				}
			}
		})
	}
}

func TestONNXDeterministic(t *testing.T) {
	e := sharedONNX(t)
	a, err := e.Embed(context.Background(), sampleTexts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Embed(context.Background(), sampleTexts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if d := maxAbsDiff(a[i], b[i]); d != 0 {
			t.Errorf("text %d: two runs differ by %g, want identical vectors", i, d)
		}
	}
}

func TestONNXEmptyInput(t *testing.T) {
	e := sharedONNX(t)
	for _, in := range [][]string{nil, {}} {
		got, err := e.Embed(context.Background(), in)
		if err != nil || len(got) != 0 {
			t.Errorf("Embed(%#v) = %d vectors, %v; want 0 vectors, no error", in, len(got), err)
		}
	}
	got, err := e.Embed(context.Background(), []string{"", "\u0000"})
	if err != nil {
		t.Fatalf("Embed of empty strings: %v", err)
	}
	if d := maxAbsDiff(got[0], got[1]); d != 0 {
		t.Errorf("\"\" and a lone control character differ by %g, want the same ([CLS][SEP]) vector", d)
	}
}

func TestONNXTruncatesLongText(t *testing.T) {
	e := sharedONNX(t)
	sentence := "The quick brown fox jumps over the lazy dog. "
	long := strings.Repeat(sentence, 2000) // ~20k tokens
	prefix := strings.Repeat(sentence, 40) // ~400 tokens: same first 254 pieces
	if n := e.Tokens(long); n < 10000 {
		t.Fatalf("Tokens(long) = %d, want > 10000", n)
	}
	v, err := e.Embed(context.Background(), []string{long, prefix, sentence})
	if err != nil {
		t.Fatalf("Embed(long): %v", err)
	}
	if d := maxAbsDiff(v[0], v[1]); d > 1e-6 {
		t.Errorf("long text and its 400-token prefix differ by %g: want equal, both truncated to 256 tokens", d)
	}
	if d := maxAbsDiff(v[0], v[2]); d < 1e-3 {
		t.Errorf("long text and one sentence differ by only %g: truncation dropped too much", d)
	}
}

// TestONNXVariantsAgree compares our fp32 graph (built from the safetensors
// weights by tools/bert_to_onnx.py) with the other files model.sh installs:
// model.int8.onnx, an independent PyTorch export of the same model with int8
// weights, must agree closely (this checks our export); model.qint8.onnx, our graph
// dynamically quantised, must stay close and keep the similarity order.
func TestONNXVariantsAgree(t *testing.T) {
	dir, _ := modelPaths(t)
	texts := sampleTexts[:len(sampleTexts)-1] // the 1000-word text is slow with int8 weights
	want, err := sharedONNX(t).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file, name string
		minCos     float64
	}{
		{"model.int8.onnx", "all-MiniLM-L6-v2-int8", 0.99},
		{"model.qint8.onnx", "all-MiniLM-L6-v2-qint8", 0.97},
	} {
		t.Run(tt.file, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, tt.file)); err != nil {
				t.Fatalf("%s: %v (deploy/local/model.sh install puts it next to model.onnx)", tt.file, err)
			}
			e := newTestONNX(t, Config{ModelFile: tt.file})
			if got := e.Info(); got != (Model{Name: tt.name, Dims: 384}) {
				t.Errorf("Info() = %+v, want %s with 384 dims", got, tt.name)
			}
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if c := Cosine(got[i], want[i]); c < tt.minCos {
					t.Errorf("text %d: cosine(model.onnx, %s) = %.4f, want >= %.2f", i, tt.file, c, tt.minCos)
				}
			}
			// Paraphrase above unrelated, as for fp32 (texts 0, 1, 2).
			if rel, unrel := Cosine(got[0], got[1]), Cosine(got[0], got[2]); rel <= unrel+0.1 {
				t.Errorf("related %.3f, unrelated %.3f: want related above by > 0.1", rel, unrel)
			}
		})
	}
}

func TestONNXConcurrent(t *testing.T) {
	e := newTestONNX(t, Config{Sessions: 2, Threads: 1, BatchSize: 2})
	in := sampleTexts[:6]
	want, err := e.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Go(func() {
			got, err := e.Embed(context.Background(), in)
			if err != nil {
				errs <- err
				return
			}
			for i := range got {
				if d := maxAbsDiff(got[i], want[i]); d > 1e-5 {
					errs <- fmt.Errorf("goroutine %d text %d: differs by %g", g, i, d)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestONNXCancelledAndClosed(t *testing.T) {
	e := newTestONNX(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, sampleTexts); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a cancelled context: got %v, want context.Canceled", err)
	}
	if _, err := e.Embed(context.Background(), []string{"still works"}); err != nil {
		t.Errorf("Embed after a cancelled call: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := e.Embed(context.Background(), []string{"x"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Embed after Close: got %v, want ErrClosed", err)
	}
}

// TestONNXCancelDuringRun cancels while the model runs: Embed must give up with
// the context's error and the session must stay usable.
func TestONNXCancelDuringRun(t *testing.T) {
	e := newTestONNX(t, Config{BatchSize: 64, BatchTokens: 64 * 256})
	long := make([]string, 64)
	for i := range long {
		long[i] = strings.Repeat(fmt.Sprintf("chunk %d of a long document about parsing. ", i), 40)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	if _, err := e.Embed(ctx, long); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed cancelled after 50ms: got %v, want context.Canceled", err)
	}
	want, err := sharedONNX(t).Embed(context.Background(), sampleTexts[:3])
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), sampleTexts[:3])
	if err != nil {
		t.Fatalf("Embed after a cancelled run: %v", err)
	}
	for i := range got {
		if d := maxAbsDiff(got[i], want[i]); d > 1e-5 {
			t.Errorf("text %d after a cancelled run differs by %g", i, d)
		}
	}
}

func TestNewONNXErrors(t *testing.T) {
	dir, lib := modelPaths(t)
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"missing model folder", Config{ModelDir: t.TempDir(), ORTLib: lib}, "model.sh install"},
		{"missing model file", Config{ModelDir: dir, ModelFile: "nope.onnx", ORTLib: lib}, "nope.onnx"},
		{"too many tokens for the model", Config{ModelDir: dir, ORTLib: lib, MaxTokens: 1024, BatchTokens: 4096}, "MaxTokens"},
		{"wrong configured dims", Config{ModelDir: dir, ORTLib: lib, Dims: 768}, "768"},
		{"second runtime library", Config{ModelDir: dir, ORTLib: filepath.Join(t.TempDir(), "libonnxruntime.so")}, "already loaded"},
	}
	sharedONNX(t) // make sure the runtime is loaded from lib
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewONNX(tt.cfg, nil)
			if err == nil {
				_ = e.Close()
				t.Fatalf("NewONNX: got no error, want one mentioning %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewONNX: got %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

// chunk256 returns n texts that each fill exactly 256 model tokens after truncation.
func chunk256(b testing.TB, e *ONNX, n int) []string {
	words := strings.Fields(`the crawler fetches pages breadth first and stores each document with its
		chunks in mariadb while the knowledge graph service extracts entities such as python
		functions modules and classes then links them with typed relations for search ranking`)
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for j := 0; j < 400; j++ {
			sb.WriteString(words[(i*7+j*13)%len(words)])
			sb.WriteByte(' ')
		}
		out[i] = sb.String()
		if got := len(e.tok.encode(out[i], 256)); got != 256 {
			b.Fatalf("chunk %d has %d tokens, want 256", i, got)
		}
	}
	return out
}

// BenchmarkONNXEmbed measures throughput on 256-token chunks (the crawler's
// default chunk size): each Embed call gets 32 chunks and the model runs them in
// batches of the given size; see the chunks/s and cpu-ms/chunk metrics.
func BenchmarkONNXEmbed(b *testing.B) {
	const perCall = 32
	type run struct {
		file              string
		threads, sessions int
		batch             int
	}
	var runs []run
	for _, file := range []string{"model.onnx", "model.qint8.onnx"} {
		for _, batch := range []int{1, 4, 16, 32} {
			runs = append(runs, run{file, 2, 1, batch})
		}
		runs = append(runs, run{file, 1, 2, 1})
	}
	for _, r := range runs {
		name := fmt.Sprintf("%s/tokens=256/threads=%d/sessions=%d/batch=%d", r.file, r.threads, r.sessions, r.batch)
		b.Run(name, func(b *testing.B) {
			e := newTestONNX(b, Config{ModelFile: r.file, Threads: r.threads, Sessions: r.sessions, BatchSize: r.batch,
				BatchTokens: r.batch * 256})
			texts := chunk256(b, e, perCall)
			ctx := context.Background()
			if _, err := e.Embed(ctx, texts[:min(r.batch*r.sessions, perCall)]); err != nil { // warm up
				b.Fatal(err)
			}
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := e.Embed(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
			chunks := float64(b.N * perCall)
			b.ReportMetric(chunks/b.Elapsed().Seconds(), "chunks/s")
			// CPU time per chunk is steadier than wall time on a shared machine.
			b.ReportMetric((cpuTime()-cpu0).Seconds()*1000/chunks, "cpu-ms/chunk")
		})
	}
}

// BenchmarkONNXQuery is the search service's case: one short query per call.
func BenchmarkONNXQuery(b *testing.B) {
	e := sharedONNX(b)
	ctx := context.Background()
	q := []string{"how do I read a file line by line in python"}
	for b.Loop() {
		if _, err := e.Embed(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime is the user+system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkWordPiece(b *testing.B) {
	dir, _ := modelPaths(b)
	wp, err := loadVocab(filepath.Join(dir, "vocab.txt"), true)
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("Reading files with Python's open() function, pathlib and io.TextIOWrapper. ", 20)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		wp.encode(text, 256)
	}
}
