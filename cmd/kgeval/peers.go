package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
)

// The peer baselines: what a user of a standard search engine gets over exactly the
// same stored chunks. Each ranks chunks; a page is ranked by its best chunk.
const (
	PeerBM25  = "peer-bm25"  // tantivy BM25, English stemming, title + headings + text
	PeerDense = "peer-dense" // exact (brute-force) cosine over the stored chunk vectors
	PeerRRF   = "peer-rrf"   // RRF (k = 60) of the two page rankings
)

// peerParams describes each peer in the reports' parameter column.
var peerParams = map[string]string{
	PeerBM25:  "tantivy BM25 (k1 1.2, b 0.75), en_stem, fields title+headings+text unboosted, page = best chunk",
	PeerDense: "exact cosine over the stored chunk vectors, same query embedding as the service, page = best chunk",
	PeerRRF:   fmt.Sprintf("RRF k=%d of peer-bm25 and peer-dense (top %d pages of each)", rrfK, peerFuseDepth),
}

const (
	rrfK          = 60   // the RRF constant of OpenSearch, Elasticsearch and Cormack et al.
	peerFuseDepth = 100  // pages of each peer ranking fused by peer-rrf
	peerChunks    = 2000 // chunks each peer ranks before pages are formed
)

// PageScore is one page of a peer's ranking.
type PageScore struct {
	URL   string
	Score float64
}

// chunkScore is one chunk of a peer's ranking, by index into Corpus.Chunks.
type chunkScore struct {
	i     int
	score float64
}

// pagesOf reduces a ranking of chunks (best first) to pages, each at the rank of
// its best chunk, at most n pages.
func pagesOf(c *Corpus, ranked []chunkScore, n int) []PageScore {
	seen := map[string]bool{}
	var out []PageScore
	for _, r := range ranked {
		u := c.Chunks[r.i].URL
		if seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, PageScore{URL: u, Score: r.score})
		if len(out) == n {
			break
		}
	}
	return out
}

// Dense ranks the corpus's chunks by exact cosine similarity to the unit query
// vector qv, best first (ties by chunk order), at most n.
func Dense(c *Corpus, qv []float32, n int) ([]chunkScore, error) {
	all := make([]chunkScore, 0, len(c.Chunks))
	for i, ch := range c.Chunks {
		if len(ch.Vector) != len(qv) {
			return nil, fmt.Errorf("chunk %s has %d dimensions, the query vector %d: the store holds another model's vectors", ch.ID, len(ch.Vector), len(qv))
		}
		var dot float32
		for j, x := range ch.Vector {
			dot += x * qv[j]
		}
		all = append(all, chunkScore{i, float64(dot)})
	}
	slices.SortStableFunc(all, func(a, b chunkScore) int { return cmp.Compare(b.score, a.score) })
	return all[:min(n, len(all))], nil
}

// RRF fuses page rankings with reciprocal rank fusion: score = Σ 1/(k + rank), rank
// from 1 in each list; ties by URL.
func RRF(k int, lists ...[]PageScore) []PageScore {
	score := map[string]float64{}
	for _, l := range lists {
		for r, p := range l {
			score[p.URL] += 1 / float64(k+r+1)
		}
	}
	out := make([]PageScore, 0, len(score))
	for u, s := range score {
		out = append(out, PageScore{URL: u, Score: s})
	}
	slices.SortFunc(out, func(a, b PageScore) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.URL, b.URL)
	})
	return out
}

// Tantivy is the standard BM25 peer: scripts/eval-tantivy.py run as a child process
// over the corpus, answering one query per line.
type Tantivy struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	index map[string]int // chunk id → index into Corpus.Chunks
	dir   string
}

// StartTantivy writes the corpus as JSON lines into a temporary directory, starts
// python script on it and waits until the script has indexed it.
func StartTantivy(ctx context.Context, python, script string, c *Corpus, stderr io.Writer) (*Tantivy, error) {
	dir, err := os.MkdirTemp("", "kgeval-tantivy-")
	if err != nil {
		return nil, fmt.Errorf("tantivy peer: %w", err)
	}
	t := &Tantivy{dir: dir, index: make(map[string]int, len(c.Chunks))}
	path := filepath.Join(dir, "corpus.jsonl")
	if err := writeCorpus(path, c); err != nil {
		t.Close()
		return nil, err
	}
	for i, ch := range c.Chunks {
		t.index[ch.ID] = i
	}
	t.cmd = exec.Command(python, script, path)
	t.cmd.Stderr = stderr
	if t.in, err = t.cmd.StdinPipe(); err != nil {
		t.Close()
		return nil, fmt.Errorf("tantivy peer: %w", err)
	}
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("tantivy peer: %w", err)
	}
	t.out = bufio.NewReaderSize(stdout, 1<<20)
	if err := t.cmd.Start(); err != nil {
		t.Close()
		return nil, fmt.Errorf("tantivy peer: start %s %s: %w (make eval installs tantivy into $KGS_STATE/eval/venv)", python, script, err)
	}
	line, err := t.readLine(ctx, 10*time.Minute)
	if err != nil || !strings.HasPrefix(line, "ready ") {
		t.Close()
		return nil, fmt.Errorf("tantivy peer did not get ready (is tantivy installed for %s?): %q %v", python, line, err) //nolint:errorlint // err may be nil (the peer answered something other than ready)
	}
	if got := strings.TrimPrefix(line, "ready "); got != fmt.Sprint(len(c.Chunks)) {
		t.Close()
		return nil, fmt.Errorf("tantivy peer indexed %s chunks, want %d", got, len(c.Chunks))
	}
	return t, nil
}

func writeCorpus(path string, c *Corpus) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("tantivy peer: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, ch := range c.Chunks {
		rec := struct {
			ID       string   `json:"id"`
			Title    string   `json:"title"`
			Headings []string `json:"headings"`
			Text     string   `json:"text"`
		}{ch.ID, ch.Title, ch.Headings, ch.Text}
		if err := enc.Encode(rec); err != nil {
			f.Close()
			return fmt.Errorf("tantivy peer: write corpus: %w", err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("tantivy peer: write corpus: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("tantivy peer: write corpus: %w", err)
	}
	return nil
}

// readLine reads one line of the script's output, giving up after timeout.
func (t *Tantivy) readLine(ctx context.Context, timeout time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := t.out.ReadString('\n')
		ch <- res{strings.TrimSpace(s), err}
	}()
	select {
	case r := <-ch:
		return r.s, r.err
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(timeout):
		return "", errors.New("no answer in " + timeout.String())
	}
}

// Search returns the n best chunks for the query text, best first.
func (t *Tantivy) Search(ctx context.Context, q string, n int) ([]chunkScore, error) {
	req, _ := json.Marshal(map[string]any{"q": q, "n": n})
	if _, err := t.in.Write(append(req, '\n')); err != nil {
		return nil, fmt.Errorf("tantivy peer: send query: %w", err)
	}
	line, err := t.readLine(ctx, time.Minute)
	if err != nil {
		return nil, fmt.Errorf("tantivy peer: read answer: %w", err)
	}
	var ans struct {
		Hits  [][2]json.RawMessage `json:"hits"`
		Error string               `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &ans); err != nil {
		return nil, fmt.Errorf("tantivy peer: answer %q: %w", snippet([]byte(line)), err)
	}
	if ans.Error != "" {
		return nil, fmt.Errorf("tantivy peer: %s", ans.Error)
	}
	out := make([]chunkScore, 0, len(ans.Hits))
	for _, h := range ans.Hits {
		var id string
		var s float64
		if json.Unmarshal(h[0], &id) != nil || json.Unmarshal(h[1], &s) != nil {
			return nil, fmt.Errorf("tantivy peer: bad hit %s", h)
		}
		i, ok := t.index[id]
		if !ok {
			return nil, fmt.Errorf("tantivy peer: unknown chunk id %q", id)
		}
		out = append(out, chunkScore{i, s})
	}
	return out, nil
}

// Close ends the script and removes its corpus file.
func (t *Tantivy) Close() {
	if t.in != nil {
		_ = t.in.Close()
	}
	if t.cmd != nil && t.cmd.Process != nil {
		done := make(chan struct{})
		go func() { _ = t.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = t.cmd.Process.Kill()
			<-done
		}
	}
	_ = os.RemoveAll(t.dir)
}

// QueryEmbedder embeds query text (pkg/embed's Embedder satisfies it).
type QueryEmbedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// BM25Searcher is the part of Tantivy the peer evaluation needs.
type BM25Searcher interface {
	Search(ctx context.Context, q string, n int) ([]chunkScore, error)
}

// PeerEvaluator answers a dataset's queries with the three peers over one corpus.
type PeerEvaluator struct {
	Corpus   *Corpus
	BM25     BM25Searcher
	Embedder QueryEmbedder
	Root     *url.URL
	K        int
	// EmbedText gives the text whose embedding the service uses for a query (its
	// normalised form, as the service reported it); nil: the query as written.
	EmbedText func(q Query) string
}

// Evaluate returns one MethodResult per peer: peer-bm25, peer-dense, peer-rrf.
func (e *PeerEvaluator) Evaluate(ctx context.Context, d *Dataset) ([]*MethodResult, error) {
	res := map[string]*MethodResult{}
	names := []string{PeerBM25, PeerDense, PeerRRF}
	for _, n := range names {
		res[n] = &MethodResult{Method: n, Kind: KindPeer, Params: peerParams[n], byQueryID: map[string]*QueryResult{}}
	}
	for _, q := range d.Queries {
		lists, took, err := e.rank(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("peers, query %s %q: %w", q.ID, q.Query, err)
		}
		for _, n := range names {
			qr, err := e.score(q, lists[n], took[n])
			if err != nil {
				return nil, err
			}
			res[n].PerQuery = append(res[n].PerQuery, *qr)
		}
	}
	out := make([]*MethodResult, 0, len(names))
	for _, n := range names {
		res[n].summarise()
		out = append(out, res[n])
	}
	return out, nil
}

// rank returns the three page rankings of one query and the time each took.
func (e *PeerEvaluator) rank(ctx context.Context, q Query) (map[string][]PageScore, map[string]time.Duration, error) {
	lists, took := map[string][]PageScore{}, map[string]time.Duration{}
	t0 := time.Now()
	bm, err := e.BM25.Search(ctx, q.Query, peerChunks)
	if err != nil {
		return nil, nil, err
	}
	lists[PeerBM25] = pagesOf(e.Corpus, bm, peerFuseDepth)
	took[PeerBM25] = time.Since(t0)

	t0 = time.Now()
	text := q.Query
	if e.EmbedText != nil {
		text = e.EmbedText(q)
	}
	vs, err := e.Embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, nil, fmt.Errorf("embed query: %d vectors, want 1", len(vs))
	}
	qv := slices.Clone(vs[0])
	embed.Normalize(qv)
	dn, err := Dense(e.Corpus, qv, peerChunks)
	if err != nil {
		return nil, nil, err
	}
	lists[PeerDense] = pagesOf(e.Corpus, dn, peerFuseDepth)
	took[PeerDense] = time.Since(t0)

	t0 = time.Now()
	lists[PeerRRF] = RRF(rrfK, lists[PeerBM25], lists[PeerDense])
	took[PeerRRF] = time.Since(t0) + took[PeerBM25] + took[PeerDense]
	return lists, took, nil
}

func (e *PeerEvaluator) score(q Query, pages []PageScore, took time.Duration) (*QueryResult, error) {
	pages = pages[:min(len(pages), e.K)]
	ranked := make([]string, 0, len(pages))
	hits := make([]Hit, 0, len(pages))
	for _, p := range pages {
		key, err := PageKey(p.URL, e.Root)
		if err != nil {
			return nil, err
		}
		ranked = append(ranked, key)
		hits = append(hits, Hit{Page: key, Grade: q.Relevant[key], Score: p.Score})
	}
	return &QueryResult{
		ID:     q.ID,
		NDCG:   NDCG(ranked, q.Relevant, e.K),
		MRR:    MRR(ranked, q.Relevant, e.K),
		Recall: Recall(ranked, q.Relevant, e.K),
		TookMS: float64(took.Microseconds()) / 1000,
		Hits:   hits,
	}, nil
}

// peerEnv runs the peers for each dataset of a run: the embedding model is loaded
// once, the corpus and the tantivy index once per dataset.
type peerEnv struct {
	opts   options
	stderr io.Writer
	emb    embed.Embedder
	model  embed.Model
}

// Evaluate ranks d's queries with the peers over the stored chunks of the documents
// carrying tags. ours are our methods' results on the same queries: the query text
// the service embedded is taken from them, so the peers' query vector is the service's.
func (pe *peerEnv) Evaluate(ctx context.Context, d *Dataset, tags []string, root *url.URL, k int, ours []*MethodResult) ([]*MethodResult, *Corpus, error) {
	if pe.emb == nil {
		cfg, err := embed.ConfigFromEnv(os.Getenv)
		if err != nil {
			return nil, nil, fmt.Errorf("peers: embedding model: %w", err)
		}
		logger := slog.New(slog.NewTextHandler(pe.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		if pe.emb, pe.model, err = embed.Start(ctx, cfg, logger); err != nil {
			return nil, nil, fmt.Errorf("peers: %w (the service's model: eval \"$(deploy/local/stack.sh env)\")", err)
		}
	}
	corpus, err := LoadCorpus(ctx, pe.opts.dsn, tags)
	if err != nil {
		return nil, nil, fmt.Errorf("peers: %w", err)
	}
	if err := embed.CheckCompatible(corpus.Model, pe.model); err != nil {
		return nil, nil, fmt.Errorf("peers: %w", err)
	}
	bm, err := StartTantivy(ctx, pe.opts.python, pe.opts.tantivyScript, corpus, pe.stderr)
	if err != nil {
		return nil, nil, err
	}
	defer bm.Close()
	normalized := map[string]string{}
	for _, m := range ours {
		for _, q := range m.PerQuery {
			if q.Normalized != "" && normalized[q.ID] == "" {
				normalized[q.ID] = q.Normalized
			}
		}
	}
	ev := &PeerEvaluator{Corpus: corpus, BM25: bm, Embedder: pe.emb, Root: root, K: k,
		EmbedText: func(q Query) string {
			if n := normalized[q.ID]; n != "" {
				return n
			}
			return queryparse.Normalize(q.Query)
		}}
	res, err := ev.Evaluate(ctx, d)
	if err != nil {
		return nil, nil, err
	}
	return res, corpus, nil
}

// Close releases the embedding model.
func (pe *peerEnv) Close() {
	if pe.emb != nil {
		_ = pe.emb.Close()
	}
}

// snippet is the start of an answer, quoted in an error.
func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
