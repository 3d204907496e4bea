// Command kgeval measures the relevance of the running search service on judged
// datasets (eval/<name>/queries.json): every query is asked with the full pipeline
// and with our single-signal modes (BM25 only, vector only, RRF of the two),
// optionally with the ablations (the full pipeline with each part switched off in
// turn) and the peer baselines (a standard BM25 — tantivy —, exact dense retrieval
// and their RRF, ranking the same stored chunks read from MariaDB), and nDCG@k,
// MRR@k and Recall@k are computed at the page level (fragments stripped) against the
// graded judgments, with paired sign tests. It prints tables, writes optional JSON
// and Markdown reports, and exits non-zero when the service is unreachable, failing,
// still indexing, or answers degraded, because the comparison then means nothing.
//
//	go run ./cmd/kgeval [-dataset eval/pydocs/queries.json] [-search http://127.0.0.1:8080] [-v]
//	go run ./cmd/kgeval -dataset 'eval/pydocs/queries.json eval/django/queries.json' -ablations -peers
//	go run ./cmd/kgeval -variant 'noexpand=expand=false' -md /tmp/eval.md -json /tmp/eval.json
//
// Run `go run ./cmd/kgeval -h` for the dataset format; eval/README.md describes it too.
//
// Exit status: 0 measured; 1 the service failed, was unreachable, was not caught up
// or answered degraded; 2 bad flags or dataset; 3 with -require-win, the full
// pipeline did not beat every baseline on mean nDCG@k.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

type variants []Method

func (v *variants) String() string { return fmt.Sprint(len(*v)) }
func (v *variants) Set(s string) error {
	m, err := ParseVariant(s)
	if err != nil {
		return err
	}
	*v = append(*v, m)
	return nil
}

// options are the parsed flags.
type options struct {
	datasets      []string
	search        string
	root          string
	k             int
	methods       []Method
	ablations     bool
	tags          string // "auto", "none" or a comma-separated list
	only          string
	verbose       bool
	top           int
	allowLag      bool
	peers         bool
	dsn           string
	python        string
	tantivyScript string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, jsonOut, mdOut, requireWin, allowDegraded, timeout, code := parseFlags(args, stderr)
	if code != 0 {
		return code
	}
	if err := checkSearchURL(o.search); err != nil {
		fmt.Fprintf(stderr, "kgeval: -search: %v\n", err)
		return 2
	}
	client := apiclient.NewSearch(o.search, &http.Client{Timeout: timeout}, "")
	st, err := client.IndexStatus(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", failure(err))
		return 1
	}
	if (st.IndexLag != 0 || st.Reindexing) && !o.allowLag {
		fmt.Fprintf(stderr, "kgeval: the search index is not caught up (index_lag %d, reindexing %v): wait for GET %s/api/v1/status to report index_lag 0, or pass -allow-lag\n", st.IndexLag, st.Reindexing, o.search)
		return 1
	}
	pe := &peerEnv{opts: o, stderr: stderr}
	defer pe.Close()
	var reports []*Report
	for i, path := range o.datasets {
		rep, code := evaluateDataset(ctx, o, path, client, st, pe, stderr)
		if code != 0 {
			return code
		}
		reports = append(reports, rep)
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if code := writeReport(rep, stdout, stderr, o); code != 0 {
			return code
		}
	}
	out := RunReport{Reports: reports}
	if len(reports) > 1 {
		out.Union = Union(reports)
		fmt.Fprintln(stdout)
		if code := writeReport(out.Union, stdout, stderr, options{}); code != 0 {
			return code
		}
	}
	if err := writeFile(jsonOut, out.WriteJSON); err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", err)
		return 1
	}
	if err := writeFile(mdOut, out.WriteMarkdown); err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", err)
		return 1
	}
	degraded, lost := false, false
	for _, r := range reports {
		degraded = degraded || len(r.Problems) > 0
		lost = lost || !strings.HasPrefix(r.Verdict, "the full pipeline beats")
	}
	if degraded && !allowDegraded {
		fmt.Fprintln(stderr, "kgeval: degraded answers; see the problems above (the logs of the service that was down or catching up)")
		return 1
	}
	if requireWin && lost {
		return 3
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (o options, jsonOut, mdOut string, requireWin, allowDegraded bool, timeout time.Duration, code int) {
	fs := flag.NewFlagSet("kgeval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { usage(fs) }
	dataset := fs.String("dataset", "eval/pydocs/queries.json", "dataset files, comma- or space-separated; with several, a union over all their queries follows")
	fs.StringVar(&o.search, "search", envOr("KGS_SEARCH_URL", "http://127.0.0.1:8080"), "search service base URL (env KGS_SEARCH_URL)")
	fs.StringVar(&o.root, "root", "", "site root the judged paths are relative to (default: the dataset's site.root; one dataset only)")
	fs.IntVar(&o.k, "k", 10, "results asked for and metric cut-off")
	methods := fs.String("methods", "full,bm25,vector,rrf", "built-in methods to run, comma-separated (full, bm25, vector, rrf)")
	var extra variants
	fs.Var(&extra, "variant", "extra method, name=param=value&param=value (repeatable), e.g. 'noexpand=expand=false'")
	fs.BoolVar(&o.ablations, "ablations", false, "also run the full pipeline with each part switched off in turn (graph retrieval, expansion, both, bm25, vector, title, recency)")
	fs.StringVar(&o.tags, "tags", "auto", "restrict every search (and the peers' corpus) to documents with these tags: auto = the dataset's crawl.tags, none = no restriction, or a comma-separated list")
	fs.BoolVar(&o.peers, "peers", false, "also rank the same stored chunks with the peer baselines: tantivy BM25, exact dense, and their RRF (needs -dsn, the embedding model and tantivy)")
	fs.StringVar(&o.dsn, "dsn", os.Getenv("KGS_MARIADB_DSN"), "MariaDB DSN the peers read the stored chunks from (env KGS_MARIADB_DSN)")
	fs.StringVar(&o.python, "python", envOr("KGS_EVAL_PYTHON", "python3"), "Python with the tantivy package, for -peers (env KGS_EVAL_PYTHON)")
	fs.StringVar(&o.tantivyScript, "tantivy-script", "scripts/eval-tantivy.py", "the tantivy BM25 peer script")
	fs.StringVar(&o.only, "queries", "", "run only these query ids, comma-separated")
	fs.BoolVar(&o.verbose, "v", false, "per-query details: scores and top hits of every method")
	fs.IntVar(&o.top, "top", 5, "hits shown per method with -v")
	fs.StringVar(&jsonOut, "json", "", "write the full report (per-query hits included) as JSON to this file")
	fs.StringVar(&mdOut, "md", "", "write the tables as Markdown to this file")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "timeout of one request")
	fs.BoolVar(&o.allowLag, "allow-lag", false, "run even when the search index is not caught up")
	fs.BoolVar(&allowDegraded, "allow-degraded", false, "exit 0 even when answers were degraded")
	fs.BoolVar(&requireWin, "require-win", false, "exit 3 unless the full pipeline beats every other method (ablations aside) on mean nDCG@k on every dataset")
	if err := fs.Parse(args); err != nil {
		return o, "", "", false, false, 0, 2
	}
	fail := func(format string, a ...any) (options, string, string, bool, bool, time.Duration, int) {
		fmt.Fprintf(stderr, "kgeval: "+format+"\n", a...)
		return o, "", "", false, false, 0, 2
	}
	if fs.NArg() > 0 {
		return fail("unexpected arguments %q", fs.Args())
	}
	if o.k < 1 || o.k > 100 {
		return fail("-k %d: want 1..100", o.k)
	}
	o.datasets = strings.FieldsFunc(*dataset, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' })
	if len(o.datasets) == 0 {
		return fail("-dataset: no dataset file given")
	}
	if len(o.datasets) > 1 && o.root != "" {
		return fail("-root applies to one dataset; with several, each dataset's site.root is used")
	}
	var err error
	if o.methods, err = selectMethods(*methods, extra); err != nil {
		return fail("-methods: %v", err)
	}
	if o.peers && o.dsn == "" {
		return fail("-peers needs -dsn or KGS_MARIADB_DSN (eval \"$(deploy/local/stack.sh env)\")")
	}
	return o, jsonOut, mdOut, requireWin, allowDegraded, timeout, 0
}

// evaluateDataset answers one dataset's queries with our methods (and ablations and
// peers when asked) and builds its report. A non-zero code ends the run.
func evaluateDataset(ctx context.Context, o options, path string, client *apiclient.SearchClient, st *apiclient.SearchStatus, pe *peerEnv, stderr io.Writer) (*Report, int) {
	d, err := LoadDataset(path)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", err)
		return nil, 2
	}
	if o.only != "" {
		if err := keepQueries(d, o.only); err != nil {
			fmt.Fprintf(stderr, "kgeval: -queries: %v\n", err)
			return nil, 2
		}
	}
	rootURL, err := siteRoot(o.root, d.Site.Root)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", err)
		return nil, 2
	}
	tags := corpusTags(o.tags, d)
	ms := o.methods
	if o.ablations {
		def, err := DefaultWeights(ctx, client, d.Queries, tags)
		if err != nil {
			fmt.Fprintf(stderr, "kgeval: %v\n", failure(err))
			return nil, 1
		}
		ms = append(slices.Clone(ms), Ablations(def)...)
	}
	ev := &Evaluator{Search: client, Root: rootURL, K: o.k, Tags: tags}
	results, err := ev.Evaluate(ctx, d, ms)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: %s: %v\n", d.Name, failure(err))
		return nil, 1
	}
	var pc *PeerCorpus
	if o.peers {
		peers, corpus, err := pe.Evaluate(ctx, d, tags, rootURL, o.k, results)
		if err != nil {
			fmt.Fprintf(stderr, "kgeval: %s: %v\n", d.Name, err)
			return nil, 1
		}
		results = append(results, peers...)
		pc = &PeerCorpus{Tag: strings.Join(tags, ","), Pages: corpus.Pages, Chunks: len(corpus.Chunks)}
	}
	rep := newReport(d, o.search, o.k, st, results, time.Now())
	rep.Tags, rep.PeerCorpus = tags, pc
	rep.data = d
	return rep, 0
}

func writeReport(rep *Report, stdout, stderr io.Writer, o options) int {
	if o.verbose && rep.data != nil {
		rep.WriteDetails(stdout, rep.data, o.top)
		rep.WriteLosses(stdout, rep.data, o.top)
		fmt.Fprintln(stdout)
	}
	if err := rep.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "kgeval: write table: %v\n", err)
		return 1
	}
	return 0
}

// corpusTags is the tag restriction of a dataset's searches (see -tags).
func corpusTags(flagTags string, d *Dataset) []string {
	switch strings.TrimSpace(flagTags) {
	case "auto":
		return d.Crawl.Tags
	case "none", "":
		return nil
	}
	return splitComma(flagTags)
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

const usageText = `usage: go run ./cmd/kgeval [flags]

Measures the relevance of a running search service on judged datasets.
make eval (scripts/eval.sh) puts every dataset's site into the stores and runs this.

A dataset is a JSON file, eval/<name>/queries.json:

  {"name": "pydocs",
   "site": {"root": "http://127.0.0.1:8099/",       judged paths are relative to it
            "script": "deploy/local/pydocs.sh",      serves the site: <script> start
            "package": "...", "version": "..."},     where the pages come from
   "crawl": {"start": "index.html", "max_depth": 3, "max_pages": 450,
             "exclude": ["regexp", ...], "tags": ["python-docs"],
             "expected_pages": 391},                 POST /api/v1/crawls, start relative to site.root
   "queries": [{"id": "q01", "query": "how do I read a file line by line",
                "style": "question", "area": "tutorial",
                "relevant": {"tutorial/inputoutput.html": 2, "library/io.html": 1}}]}

Grades: 2 answers the query (every query needs one), 1 useful. crawl.tags name the
dataset's corpus: every search is restricted to documents carrying them (-tags), and
the peers rank the stored chunks of exactly those documents, so several corpora can
share the store.

Methods: full (service defaults), bm25, vector, rrf; -ablations adds no-graph
(graph weight 0), no-expand (expand=false), graph-off (both), no-bm25, no-vector,
no-title, no-recency (the service's default weights with that signal at 0); -peers
adds peer-bm25 (tantivy, scripts/eval-tantivy.py), peer-dense (exact cosine over the
stored vectors, the service's query embedding) and peer-rrf (RRF k=60 of the two).
With several datasets, a union of their queries follows (means and sign tests over
all of them).

Flags:
`

func usage(fs *flag.FlagSet) {
	fmt.Fprint(fs.Output(), usageText)
	fs.PrintDefaults()
}

func failure(err error) string {
	if errors.Is(err, apiclient.ErrUnreachable) {
		return err.Error() + "\n  start the stack and services with scripts/eval.sh (make eval) or scripts/services.sh start"
	}
	return err.Error()
}

// checkSearchURL accepts an http(s)://host[:port] base URL.
func checkSearchURL(base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("search url %q: want http(s)://host:port", base)
	}
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func siteRoot(flagRoot, datasetRoot string) (*url.URL, error) {
	r := flagRoot
	if r == "" {
		r = datasetRoot
	}
	if r == "" {
		return nil, errors.New("no site root: set site.root in the dataset or pass -root")
	}
	u, err := url.Parse(r)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("site root %q: want an absolute URL such as http://127.0.0.1:8099/", r)
	}
	return u, nil
}

func selectMethods(list string, extra []Method) ([]Method, error) {
	builtin := map[string]Method{}
	for _, m := range BuiltinMethods() {
		builtin[m.Name] = m
	}
	var out []Method
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		m, ok := builtin[name]
		if !ok {
			return nil, fmt.Errorf("unknown method %q (want full, bm25, vector, rrf; use -variant for others)", name)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, m)
		}
	}
	for _, m := range extra {
		if seen[m.Name] {
			return nil, fmt.Errorf("method name %q is used twice", m.Name)
		}
		seen[m.Name] = true
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, errors.New("no method to run")
	}
	return out, nil
}

func keepQueries(d *Dataset, ids string) error {
	want := map[string]bool{}
	for _, id := range strings.Split(ids, ",") {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = true
		}
	}
	var kept []Query
	for _, q := range d.Queries {
		if want[q.ID] {
			kept = append(kept, q)
			delete(want, q.ID)
		}
	}
	if len(want) > 0 {
		var missing []string
		for id := range want {
			missing = append(missing, id)
		}
		return fmt.Errorf("unknown query ids %v", missing)
	}
	if len(kept) == 0 {
		return errors.New("no query selected")
	}
	d.Queries = kept
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create report: %w", err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close report %s: %w", path, err)
	}
	return nil
}
