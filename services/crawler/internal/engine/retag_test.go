package engine

import (
	"context"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/store"
)

// crawlWithEvents runs one job on a fresh engine and returns its final
// status with the page events it published.
func crawlWithEvents(t *testing.T, st *store.Store, spec Spec) (Status, []Event) {
	t.Helper()
	e := newEngine(t, st, engineOpts{})
	id := createJob(t, st, spec)
	events, unsubscribe := e.Subscribe(id) // before the engine runs: no event is missed
	defer unsubscribe()
	stop := runEngine(t, e)
	s := waitJob(t, e, id, 30*time.Second)
	stop()
	var pages []Event
	for {
		select {
		case ev := <-events:
			if ev.Type == EventPage {
				pages = append(pages, ev)
			}
		default:
			return s, pages
		}
	}
}

// tagsByPath maps the path of every stored document to its tags.
func tagsByPath(t *testing.T, st *store.Store, base string) map[string][]string {
	t.Helper()
	page, err := st.ListDocuments(context.Background(), store.ListOptions{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, d := range page.Documents {
		out[strings.TrimPrefix(d.URL, base)] = d.Tags
	}
	return out
}

func changeCount(t *testing.T, st *store.Store) int {
	t.Helper()
	n := 0
	for _, ops := range changesPerDocument(t, st) {
		for _, c := range ops {
			n += c
		}
	}
	return n
}

func outboxCount(t *testing.T, st *store.Store) int {
	t.Helper()
	items, err := st.OutboxItems(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(items)
}

// TestNewTagsReachUnchangedPages: the tags a page is stored with are those of
// the crawl (or POST /pages) that processed it last, also when its content
// did not change (content hash) or the server answered 304: the tags are
// replaced in MariaDB with an update change for search, without embedding the
// page again or writing to kg's outbox, and the page event says so.
func TestNewTagsReachUnchangedPages(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, freshDatabase(t))
	rs := newRecrawlSite(t)
	spec := func(recrawl bool, tags ...string) Spec {
		return Spec{URL: rs.URL + "/", MaxDepth: ptr(1), UseSitemap: ptr(false), Recrawl: recrawl, Tags: tags}
	}
	all := func(tags ...string) map[string][]string {
		return map[string][]string{"/": tags, "/x": tags, "/y": tags, "/z": tags}
	}

	first, _ := crawlWithEvents(t, st, spec(false, "python-docs"))
	if first.Counters.Stored != 4 {
		t.Fatalf("first crawl stored %d, want 4", first.Counters.Stored)
	}
	changes, outbox := changeCount(t, st), outboxCount(t, st)

	second, events := crawlWithEvents(t, st, spec(false, "python"))
	if second.Counters.Unchanged != 4 || second.Counters.Stored != 0 || second.Counters.Chunks != 0 {
		t.Errorf("second crawl: unchanged %d, stored %d, chunks %d; want 4, 0, 0 (not embedded again)",
			second.Counters.Unchanged, second.Counters.Stored, second.Counters.Chunks)
	}
	if got := tagsByPath(t, st, rs.URL); !equalTags(got, all("python")) {
		t.Errorf("tags after the second crawl: got %v, want python on every page", got)
	}
	if got := changeCount(t, st) - changes; got != 4 {
		t.Errorf("change feed: %d new changes, want 4 (one update per retagged page, for search)", got)
	}
	if got := outboxCount(t, st); got != outbox {
		t.Errorf("outbox rows: %d, want %d (kg holds no tags: nothing to send)", got, outbox)
	}
	for _, ev := range events {
		if ev.Outcome != DoneUnchanged || !strings.Contains(ev.Detail, "[python-docs] replaced by [python]") {
			t.Errorf("page event %s: outcome %q, detail %q; want unchanged saying the tags were replaced", ev.URL, ev.Outcome, ev.Detail)
		}
	}
	if len(events) != 4 {
		t.Errorf("got %d page events, want 4", len(events))
	}
	vec, err := embedtest.NewHash(testDims).Embed(ctx, []string{"Stable content."})
	if err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[string]int{"python": 4, "python-docs": 0} {
		hits, err := st.SearchVectors(ctx, vec[0], 10, store.Filter{Tags: []string{tag}})
		if err != nil {
			t.Fatal(err)
		}
		if docs := distinctDocs(hits); docs != want {
			t.Errorf("vector search with tag %s: %d documents, want %d", tag, docs, want)
		}
	}

	// A recrawl with the same tags changes nothing; /x answers 304.
	changes = changeCount(t, st)
	same, events := crawlWithEvents(t, st, spec(true, "python"))
	if same.Counters.Unchanged != 4 || changeCount(t, st) != changes {
		t.Errorf("same tags: unchanged %d (want 4), %d new changes (want 0)", same.Counters.Unchanged, changeCount(t, st)-changes)
	}
	for _, ev := range events {
		if ev.Detail != "" {
			t.Errorf("page event %s with the same tags: detail %q, want none", ev.URL, ev.Detail)
		}
	}

	// A recrawl with new tags: /x is answered 304 and is retagged all the same.
	rs.mu.Lock()
	conditionals := rs.conditionals
	rs.mu.Unlock()
	third, events := crawlWithEvents(t, st, spec(true, "py3", "stable"))
	rs.mu.Lock()
	if rs.conditionals != conditionals+1 {
		t.Errorf("304 answers: got %d, want %d (/x)", rs.conditionals, conditionals+1)
	}
	rs.mu.Unlock()
	if third.Counters.Unchanged != 4 {
		t.Errorf("third crawl: unchanged %d, want 4", third.Counters.Unchanged)
	}
	if got := tagsByPath(t, st, rs.URL); !equalTags(got, all("py3", "stable")) {
		t.Errorf("tags after a recrawl with 304: got %v, want py3, stable on every page", got)
	}
	if i := slices.IndexFunc(events, func(ev Event) bool { return strings.HasSuffix(ev.URL, "/x") }); i < 0 ||
		!strings.Contains(events[i].Detail, "replaced by [py3, stable]") || events[i].Chunks == 0 {
		t.Errorf("page event of /x (304): got %+v, want unchanged with its chunks and the tags replaced", events)
	}

	// POST /api/v1/pages on an unchanged page.
	e := newEngine(t, st, engineOpts{})
	res, err := e.CrawlPage(ctx, rs.URL+"/y", []string{"other"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != "unchanged" || !slices.Equal(res.Document.Tags, []string{"other"}) || !strings.Contains(res.Detail, "replaced by [other]") {
		t.Errorf("single page: outcome %q, tags %v, detail %q; want unchanged, [other], the tags replaced", res.Outcome, res.Document.Tags, res.Detail)
	}
	if res.Document.UpdatedAt.IsZero() || res.Document.CreatedAt.IsZero() || res.Chunks == 0 {
		t.Errorf("single page document: %+v, want its stored times and chunks", res.Document)
	}
	if got := tagsByPath(t, st, rs.URL)["/y"]; !slices.Equal(got, []string{"other"}) {
		t.Errorf("stored tags of /y: %v, want [other]", got)
	}
}

func equalTags(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		x, y := slices.Clone(v), slices.Clone(b[k])
		sort.Strings(x)
		sort.Strings(y)
		if !slices.Equal(x, y) {
			return false
		}
	}
	return true
}

func distinctDocs(hits []store.Hit) int {
	seen := map[string]bool{}
	for _, h := range hits {
		seen[h.DocumentID] = true
	}
	return len(seen)
}
