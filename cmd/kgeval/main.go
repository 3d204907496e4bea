// Command kgeval measures the relevance of the running search service on a judged
// dataset (eval/<name>/queries.json): every query is asked with the full pipeline
// and with the baselines (BM25 only, vector only, RRF of the two), and nDCG@k, MRR@k
// and Recall@k are computed at the page level (fragments stripped) against the
// graded judgments. It prints a table of means, writes optional JSON and Markdown
// reports, and exits non-zero when the service is unreachable, failing, still
// indexing, or answers degraded, because the comparison then means nothing.
//
//	go run ./cmd/kgeval [-dataset eval/pydocs/queries.json] [-search http://127.0.0.1:8080] [-v]
//	go run ./cmd/kgeval -variant 'noexpand=expand=false' -md /tmp/eval.md -json /tmp/eval.json
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
	"net/url"
	"os"
	"os/signal"
	"strings"
	"time"
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

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kgeval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataset := fs.String("dataset", "eval/pydocs/queries.json", "dataset file")
	search := fs.String("search", envOr("KGS_SEARCH_URL", "http://127.0.0.1:8080"), "search service base URL (env KGS_SEARCH_URL)")
	root := fs.String("root", "", "site root the judged paths are relative to (default: the dataset's site.root)")
	k := fs.Int("k", 10, "results asked for and metric cut-off")
	methods := fs.String("methods", "full,bm25,vector,rrf", "built-in methods to run, comma-separated (full, bm25, vector, rrf)")
	var extra variants
	fs.Var(&extra, "variant", "extra method, name=param=value&param=value (repeatable), e.g. 'noexpand=expand=false'")
	only := fs.String("queries", "", "run only these query ids, comma-separated")
	verbose := fs.Bool("v", false, "per-query details: scores and top hits of every method")
	top := fs.Int("top", 5, "hits shown per method with -v")
	jsonOut := fs.String("json", "", "write the full report (per-query hits included) as JSON to this file")
	mdOut := fs.String("md", "", "write the table as Markdown to this file")
	timeout := fs.Duration("timeout", 30*time.Second, "timeout of one request")
	allowLag := fs.Bool("allow-lag", false, "run even when the search index is not caught up")
	allowDegraded := fs.Bool("allow-degraded", false, "exit 0 even when answers were degraded")
	requireWin := fs.Bool("require-win", false, "exit 3 unless the full pipeline beats every other method on mean nDCG@k")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "kgeval: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *k < 1 || *k > 100 {
		fmt.Fprintf(stderr, "kgeval: -k %d: want 1..100\n", *k)
		return 2
	}
	d, err := LoadDataset(*dataset)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", err)
		return 2
	}
	if *only != "" {
		if err := keepQueries(d, *only); err != nil {
			fmt.Fprintf(stderr, "kgeval: -queries: %v\n", err)
			return 2
		}
	}
	rootURL, err := siteRoot(*root, d.Site.Root)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", err)
		return 2
	}
	ms, err := selectMethods(*methods, extra)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: -methods: %v\n", err)
		return 2
	}
	client, err := NewClient(*search, *timeout)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: -search: %v\n", err)
		return 2
	}

	st, err := client.Status(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", failure(err))
		return 1
	}
	if (st.IndexLag != 0 || st.Reindexing) && !*allowLag {
		fmt.Fprintf(stderr, "kgeval: the search index is not caught up (index_lag %d, reindexing %v): wait for GET %s/api/v1/status to report index_lag 0, or pass -allow-lag\n", st.IndexLag, st.Reindexing, *search)
		return 1
	}
	ev := &Evaluator{Search: client, Root: rootURL, K: *k}
	results, err := ev.Evaluate(ctx, d, ms)
	if err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", failure(err))
		return 1
	}
	rep := newReport(d, *search, *k, st, results, time.Now())
	if *verbose {
		rep.WriteDetails(stdout, d, *top)
		rep.WriteLosses(stdout, d, *top)
		fmt.Fprintln(stdout)
	}
	if err := rep.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "kgeval: write table: %v\n", err)
		return 1
	}
	if err := writeFile(*jsonOut, rep.WriteJSON); err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", err)
		return 1
	}
	if err := writeFile(*mdOut, rep.WriteMarkdown); err != nil {
		fmt.Fprintf(stderr, "kgeval: %v\n", err)
		return 1
	}
	if len(rep.Problems) > 0 && !*allowDegraded {
		fmt.Fprintln(stderr, "kgeval: degraded answers; see the problems above (the logs of the service that was down or catching up)")
		return 1
	}
	if *requireWin && !strings.HasPrefix(rep.Verdict, "the full pipeline beats") {
		return 3
	}
	return 0
}

func failure(err error) string {
	if errors.Is(err, ErrUnreachable) {
		return err.Error() + "\n  start the stack and services with scripts/eval.sh (make eval) or scripts/services.sh start"
	}
	return err.Error()
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
