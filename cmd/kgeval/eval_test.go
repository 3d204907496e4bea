package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

// fakeSearch is a stand-in for the search service: answers chosen by the request's
// weights field (the method), status with a configurable lag.
type fakeSearch struct {
	lag      int
	degraded []string
	fail     int                 // HTTP status for searches, 0 = answer
	answers  map[string][]string // weights value → result URLs
	seen     []string            // searches received: method, query string and body
}

func (f *fakeSearch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/v1/status":
		_ = json.NewEncoder(w).Encode(map[string]any{"index_lag": f.lag, "documents": 3, "indexed_chunks": 9, "caught_up": f.lag == 0})
	case "/api/v1/search":
		body, _ := io.ReadAll(r.Body)
		f.seen = append(f.seen, r.Method+" ?"+r.URL.RawQuery+" "+strings.TrimSpace(string(body)))
		var req struct {
			Weights string `json:"weights"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, `{"title":"bad body"}`, http.StatusBadRequest)
			return
		}
		if f.fail != 0 {
			http.Error(w, `{"title":"boom"}`, f.fail)
			return
		}
		var results []map[string]any
		for i, u := range f.answers[req.Weights] {
			results = append(results, map[string]any{"rank": i + 1, "url": u, "score": 1 - float64(i)/10,
				"score_breakdown": map[string]float64{"vector": 0.5, "bm25": 0.5}})
		}
		deg := f.degraded
		if deg == nil {
			deg = []string{}
		}
		ans := map[string]any{"results": results, "degraded": deg, "result_count": len(results)}
		if req.Weights == "" {
			ans["explain"] = map[string]any{"weights": "vector:0.35,graph:0.25,bm25:0.2,recency:0.1,title:0.1"}
		}
		_ = json.NewEncoder(w).Encode(ans)
	default:
		http.NotFound(w, r)
	}
}

const site = "http://127.0.0.1:8099/"

func writeDataset(t *testing.T) string {
	t.Helper()
	d := Dataset{Name: "mini", Site: Site{Root: site}, Queries: []Query{
		{ID: "q1", Query: "read a file line by line", Relevant: Judgments{"tutorial/inputoutput.html": 2, "library/io.html": 1}},
		{ID: "q2", Query: "json", Relevant: Judgments{"library/json.html": 2}},
	}}
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "queries.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	good := map[string][]string{
		// full pipeline (no weights parameter): both answers at rank 1
		"": {site + "tutorial/inputoutput.html#methods-of-file-objects", site + "library/json.html", site + "library/io.html"},
		// bm25: the io page first
		"bm25:1": {site + "library/io.html", site + "tutorial/inputoutput.html"},
		// vector: nothing relevant
		"vector:1": {site + "library/os.html"},
		// rrf: same as full
		"vector:1,bm25:1": {site + "tutorial/inputoutput.html", site + "library/json.html", site + "library/io.html"},
		// a variant that wins q2 (json at rank 1) and loses q1
		"alt": {site + "library/json.html", site + "tutorial/inputoutput.html"},
	}
	tests := []struct {
		name   string
		fake   fakeSearch
		args   []string
		code   int
		stdout []string // substrings
		stderr string
	}{
		{name: "measured", fake: fakeSearch{answers: good}, code: 0,
			stdout: []string{"full", "1.000", "vector", "0.000", "does NOT beat rrf"}},
		{name: "require win fails on a tie", fake: fakeSearch{answers: good}, args: []string{"-require-win"}, code: 3},
		{name: "require win passes without the tie", fake: fakeSearch{answers: good}, args: []string{"-require-win", "-methods", "full,bm25,vector"}, code: 0,
			stdout: []string{"beats every other method"}},
		{name: "degraded answers", fake: fakeSearch{answers: good, degraded: []string{"graph"}}, code: 1,
			stdout: []string{"INVALID", "degraded (graph)"}, stderr: "degraded answers"},
		{name: "degraded allowed", fake: fakeSearch{answers: good, degraded: []string{"graph"}}, args: []string{"-allow-degraded"}, code: 0},
		{name: "index lagging", fake: fakeSearch{answers: good, lag: 12}, code: 1, stderr: "index_lag 12"},
		{name: "lag allowed", fake: fakeSearch{answers: good, lag: 12}, args: []string{"-allow-lag"}, code: 0},
		{name: "search fails", fake: fakeSearch{fail: 500}, code: 1, stderr: "search: 500: boom"},
		{name: "losses listed with -v", fake: fakeSearch{answers: good}, args: []string{"-v", "-variant", "alt=weights=alt"}, code: 0,
			stdout: []string{"full loses to alt on 1 queries", `q2 "json": nDCG 0.631 vs 1.000 (-0.369)`, "full loses to bm25 on 0 queries", "alt:    library/json[2] tutorial/inputoutput[0]"}},
		{name: "unknown method", fake: fakeSearch{answers: good}, args: []string{"-methods", "full,magic"}, code: 2, stderr: `unknown method "magic"`},
		{name: "bad k", fake: fakeSearch{answers: good}, args: []string{"-k", "0"}, code: 2, stderr: "-k 0"},
		{name: "one query", fake: fakeSearch{answers: good}, args: []string{"-queries", "q2", "-methods", "full"}, code: 0,
			stdout: []string{"1 queries"}},
		{name: "unknown query id", fake: fakeSearch{answers: good}, args: []string{"-queries", "q9"}, code: 2, stderr: "unknown query ids"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := tc.fake
			srv := httptest.NewServer(&fake)
			defer srv.Close()
			var out, errb bytes.Buffer
			args := append([]string{"-dataset", writeDataset(t), "-search", srv.URL}, tc.args...)
			code := run(context.Background(), args, &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out.String(), errb.String())
			}
			for _, s := range tc.stdout {
				if !strings.Contains(out.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, out.String())
				}
			}
			if tc.stderr != "" && !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errb.String())
			}
		})
	}
}

func TestRunAblationsTagsAndUnion(t *testing.T) {
	fake := &fakeSearch{answers: map[string][]string{
		"": {site + "tutorial/inputoutput.html", site + "library/json.html"},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	one := writeDataset(t)
	b, _ := os.ReadFile(one)
	var d Dataset
	_ = json.Unmarshal(b, &d)
	d.Name, d.Crawl.Tags = "tagged", []string{"python-docs"}
	b, _ = json.Marshal(d)
	two := filepath.Join(t.TempDir(), "queries.json")
	if err := os.WriteFile(two, b, 0o600); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(t.TempDir(), "report.md")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-dataset", one + " " + two, "-search", srv.URL, "-ablations", "-methods", "full,bm25", "-md", md}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, s := range []string{"dataset mini:", "dataset tagged:", "searches restricted to tags=python-docs", "dataset union of mini, tagged: 4 queries",
		"no-graph", "graph-off", "no-recency", "full vs no-expand", "weights=vector:0.35,graph:0.25,bm25:0.2,title:0.1"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("stdout lacks %q:\n%s", s, out.String())
		}
	}
	// The ablations do not take part in the verdict: full beats bm25.
	if !strings.Contains(out.String(), "verdict: the full pipeline beats every other method") {
		t.Errorf("verdict counts the ablations:\n%s", out.String())
	}
	// But it names them when they score as well: the fake answers every
	// query alike whatever the expansion switch, so no-expand ties the full pipeline.
	if !regexp.MustCompile(`beats every other method on mean nDCG@10; ablations at or above it: [^\n]*no-expand`).MatchString(out.String()) {
		t.Errorf("verdict does not name the ablations that tie the full pipeline:\n%s", out.String())
	}
	tagged, untagged := 0, 0
	for _, q := range fake.seen {
		if strings.Contains(q, `"tags":["python-docs"]`) {
			tagged++
		} else {
			untagged++
		}
	}
	// mini: 1 probe + 2 queries × 11 methods untagged; tagged: the same with tags.
	if tagged != 23 || untagged != 23 {
		t.Errorf("%d tagged and %d untagged requests, want 23 and 23", tagged, untagged)
	}
	m, _ := os.ReadFile(md)
	for _, s := range []string{"### mini", "### tagged", "### union of mini, tagged", "| no-bm25 |"} {
		if !strings.Contains(string(m), s) {
			t.Errorf("markdown lacks %q:\n%s", s, m)
		}
	}
	if code := run(context.Background(), []string{"-dataset", one + "," + two, "-root", site, "-search", srv.URL}, &out, &errb); code != 2 {
		t.Errorf("-root with two datasets: exit %d, want 2", code)
	}
}

func TestRunUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there any more
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"-dataset", writeDataset(t), "-search", addr}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "unreachable") {
		t.Errorf("exit %d, stderr %q; want 1 and an unreachable message", code, errb.String())
	}
}

func TestEvaluateSendsMethodParameters(t *testing.T) {
	fake := &fakeSearch{answers: map[string][]string{}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := apiclient.NewSearch(srv.URL, nil, "")
	d := &Dataset{Queries: []Query{{ID: "q1", Query: "a b", Relevant: Judgments{"x.html": 2}}}}
	ev := &Evaluator{Search: c, Root: mustURL(t, site), K: 7}
	if _, err := ev.Evaluate(context.Background(), d, BuiltinMethods()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`POST ?format=json {"q":"a b","k":7,"explain":true}`,
		`POST ?format=json {"q":"a b","k":7,"weights":"bm25:1","expand":false,"explain":true}`,
		`POST ?format=json {"q":"a b","k":7,"weights":"vector:1","expand":false,"explain":true}`,
		`POST ?format=json {"q":"a b","k":7,"weights":"vector:1,bm25:1","fusion":"rrf","expand":false,"explain":true}`,
	}
	if diff := cmp.Diff(want, fake.seen); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestEvaluateMeansAndComparison(t *testing.T) {
	fake := &fakeSearch{answers: map[string][]string{
		"":       {site + "a.html", site + "b.html"},
		"bm25:1": {site + "b.html", site + "a.html"},
	}}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	c := apiclient.NewSearch(srv.URL, nil, "")
	d := &Dataset{Queries: []Query{
		{ID: "q1", Query: "one", Relevant: Judgments{"a.html": 2}},
		{ID: "q2", Query: "two", Relevant: Judgments{"b.html": 2}},
	}}
	ms := BuiltinMethods()[:2]
	res, err := (&Evaluator{Search: c, Root: mustURL(t, site), K: 10}).Evaluate(context.Background(), d, ms)
	if err != nil {
		t.Fatal(err)
	}
	// Each method has one query at rank 1 (nDCG 1, RR 1) and one at rank 2
	// (nDCG 1/log2(3) = 0.6309298, RR 0.5): means 0.8154649 and 0.75.
	for _, m := range res {
		if !approx(m.NDCG, (1+0.6309297535714575)/2) || !approx(m.MRR, 0.75) || !approx(m.Recall, 1) {
			t.Errorf("%s: nDCG %v MRR %v Recall %v, want 0.8154649 0.75 1", m.Method, m.NDCG, m.MRR, m.Recall)
		}
	}
	p := Compare(res[0], res[1], tieEps)
	if p.Wins != 1 || p.Losses != 1 || p.Ties != 0 || !approx(p.MeanDiff, 0) {
		t.Errorf("comparison %+v, want 1 win, 1 loss, mean difference 0", p)
	}
}

func TestParseVariant(t *testing.T) {
	m, err := ParseVariant("noexp=expand=false&weights=vector:0.5,bm25:0.5")
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "noexp" || m.Params.Get("expand") != "false" || m.Params.Get("weights") != "vector:0.5,bm25:0.5" {
		t.Errorf("got %+v", m)
	}
	for _, bad := range []string{"", "=expand=false", "novalue", "x=q=hello", "x=k=3", "x=%zz"} {
		if _, err := ParseVariant(bad); err == nil {
			t.Errorf("ParseVariant(%q): got no error, want one", bad)
		}
	}
}
