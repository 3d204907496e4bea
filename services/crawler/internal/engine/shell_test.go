package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// TestCrawlScriptRenderedSite crawls a site whose pages, but one, are empty
// shells that JavaScript fills in the browser: each shell ends done with the
// reason script_rendered and its evidence, the server-rendered page is
// stored, and the status warns that the crawl found (next to) nothing.
func TestCrawlScriptRenderedSite(t *testing.T) {
	site := testsite.NewShellSite()
	t.Cleanup(site.Close)
	st := openStore(t, freshDatabase(t))
	e := newEngine(t, st, engineOpts{allow: []string{site.Addr()}})
	id := createJob(t, st, Spec{URL: site.SeedURL(), MaxDepth: ptr(1), UseSitemap: ptr(false)})
	events, unsubscribe := e.Subscribe(id)
	defer unsubscribe()
	runEngine(t, e)
	status := waitJob(t, e, id, 60*time.Second)
	if status.Status != store.JobDone {
		t.Fatalf("status %s, errors %v", status.Status, status.LastErrors)
	}

	if diff := cmp.Diff(map[string]bool{testsite.PathShellAbout: true}, storedPaths(t, st)); diff != "" {
		t.Errorf("stored pages (-want +got):\n%s", diff)
	}
	c := status.Counters
	if c.Stored != 1 || c.ScriptRendered != 4 || c.Empty != 4 {
		t.Errorf("counters: stored %d, script_rendered %d, empty %d; want 1, 4, 4", c.Stored, c.ScriptRendered, c.Empty)
	}
	fr, err := st.FrontierReasons(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if n := fr[store.FrontierDone][DoneScriptRendered]; n != 4 {
		t.Errorf("frontier rows done with reason %s: got %d, want 4 (all: %v)", DoneScriptRendered, n, fr)
	}

	evidence := map[string]string{} // URL → what shows the page is a shell
	for _, p := range testsite.ShellPaths() {
		evidence[site.URL()+p] = htmltext.DetectShell([]byte(testsite.ShellPages()[p]), "text/html").Evidence()
	}
	if len(status.Warnings) != 1 {
		t.Fatalf("warnings: got %q, want one", status.Warnings)
	}
	w := status.Warnings[0]
	named := false
	for _, ev := range evidence {
		named = named || strings.Contains(w, "("+ev+")")
	}
	if !strings.HasPrefix(w, "4 of 5 pages are rendered by JavaScript in the browser") || !named || !strings.Contains(w, "static export") {
		t.Errorf("warning: got %q, want 4 of 5 pages, the evidence of one of them and what to crawl instead", w)
	}

	got := map[string]string{}
	for len(got) < len(evidence) {
		select {
		case ev := <-events:
			if ev.Type == EventPage && ev.Reason == DoneScriptRendered {
				if ev.Outcome != DoneScriptRendered {
					t.Errorf("page event of %s: outcome %q, want %q", ev.URL, ev.Outcome, DoneScriptRendered)
				}
				got[ev.URL] = ev.Detail
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("page events of shells: got %v, want %v", got, evidence)
		}
	}
	if diff := cmp.Diff(evidence, got); diff != "" {
		t.Errorf("details of the script_rendered page events (-want +got):\n%s", diff)
	}
}

// TestCrawlPageScriptRendered indexes one shell through POST /pages' path:
// nothing is stored, the outcome says why.
func TestCrawlPageScriptRendered(t *testing.T) {
	site := testsite.NewShellSite()
	t.Cleanup(site.Close)
	st := openStore(t, freshDatabase(t))
	e := newEngine(t, st, engineOpts{allow: []string{site.Addr()}})
	res, err := e.CrawlPage(context.Background(), site.URL()+testsite.PathShellReact, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "script_rendered" || res.Detail != `an empty <div id="root">` || res.Document.ID != "" {
		t.Errorf("got outcome %q, detail %q, document %q; want script_rendered, an empty <div id=\"root\">, none", res.Outcome, res.Detail, res.Document.ID)
	}
}

func TestStatusWarnsWhenMostPagesAreShells(t *testing.T) {
	job := store.Job{ID: "j", Status: store.JobDone, Spec: json.RawMessage(`{"url":"http://docs.test/"}`)}
	for _, tc := range []struct {
		name    string
		done    map[string]int64
		sample  string
		warning string
	}{
		{"all shells", map[string]int64{DoneScriptRendered: 12}, `an empty <div id="app">`,
			`12 of 12 pages are rendered by JavaScript in the browser (an empty <div id="app">); the crawler reads the HTML the server sends and found no text. Crawl the site's pre-rendered or static export, or its sources, instead.`},
		{"one page", map[string]int64{DoneScriptRendered: 1}, "",
			`1 of 1 page is rendered by JavaScript in the browser; the crawler reads the HTML the server sends and found no text. Crawl the site's pre-rendered or static export, or its sources, instead.`},
		{"most", map[string]int64{DoneScriptRendered: 3, DoneStored: 1, DoneEmpty: 1}, "x", "3 of 5 pages are rendered"},
		{"half", map[string]int64{DoneScriptRendered: 2, DoneStored: 1, DoneUnchanged: 1}, "x", ""},
		{"none", map[string]int64{DoneStored: 4, DoneEmpty: 3}, "", ""},
		// A recrawl that finds the stored pages turned into shells removes
		// them: they count as shells among the done pages.
		{"shells removed", map[string]int64{deletedReason(DoneScriptRendered): 3, deletedReason("http_404"): 1, DoneScriptRendered: 1, DoneStored: 1},
			"", "4 of 6 pages are rendered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := map[store.FrontierState]map[string]int64{store.FrontierDone: tc.done,
				store.FrontierFailed: {"http_404": 3}, store.FrontierSkipped: {SkipRedirect: 2}}
			st, err := buildStatus(job, progress{ScriptShell: tc.sample}, fr, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if st.Warnings == nil {
				t.Fatal("warnings: nil, want a list")
			}
			if tc.warning == "" {
				if len(st.Warnings) != 0 {
					t.Errorf("warnings: got %q, want none", st.Warnings)
				}
				return
			}
			if len(st.Warnings) != 1 || !strings.HasPrefix(st.Warnings[0], tc.warning) {
				t.Errorf("warnings: got %q, want one starting %q", st.Warnings, tc.warning)
			}
			if st.Counters.ScriptRendered != tc.done[DoneScriptRendered] || st.Counters.Empty < st.Counters.ScriptRendered {
				t.Errorf("counters: script_rendered %d, empty %d", st.Counters.ScriptRendered, st.Counters.Empty)
			}
		})
	}
}
