package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// storedURLs lists the canonical URLs of every stored document, sorted.
func storedURLs(t *testing.T, st *store.Store) []string {
	t.Helper()
	var out []string
	page, err := st.ListDocuments(context.Background(), store.ListOptions{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range page.Documents {
		out = append(out, d.URL)
	}
	sort.Strings(out)
	return out
}

// TestTestsiteGroundTruth crawls the generated test site and compares what
// was stored with the site's own ground truth, for several settings.
func TestTestsiteGroundTruth(t *testing.T) {
	stripWWW := canon.DefaultOptions()
	stripWWW.StripWWW = true
	for _, tc := range []struct {
		name    string
		depth   int
		robots  bool
		sitemap bool
		host    string
		canon   canon.Options
	}{
		{"depth 1", 1, true, true, "", canon.DefaultOptions()},
		{"depth 3", 3, true, true, "", canon.DefaultOptions()},
		{"depth 3 without sitemap", 3, true, false, "", canon.DefaultOptions()},
		{"depth 2 ignoring robots", 2, false, true, "", canon.DefaultOptions()},
		{"host names with www", 3, true, true, "site.test", stripWWW},
	} {
		t.Run(tc.name, func(t *testing.T) {
			site := testsite.New(testsite.Options{Host: tc.host, RetryAfter: 1})
			t.Cleanup(site.Close)
			st := openStore(t, freshDatabase(t))
			o := engineOpts{retries: 3, allow: []string{site.Addr()}, canon: &tc.canon}
			if tc.host != "" {
				o.resolver = site.Resolver()
			}
			e := newEngine(t, st, o)
			runEngine(t, e)
			spec := Spec{URL: site.SeedURL(), MaxDepth: ptr(tc.depth), MaxPages: 1000, RespectRobots: ptr(tc.robots), UseSitemap: ptr(tc.sitemap)}
			if tc.host != "" {
				spec.AllowedDomains = []string{tc.host}
			}
			status := waitJob(t, e, createJob(t, st, spec), 90*time.Second)
			if status.Status != store.JobDone {
				t.Fatalf("status %s, errors %v", status.Status, status.LastErrors)
			}

			want := site.CanonicalPages(testsite.Crawl{MaxDepth: tc.depth, RespectRobots: tc.robots, UseSitemap: tc.sitemap, Canon: tc.canon})
			if diff := cmp.Diff(want, storedURLs(t, st)); diff != "" {
				t.Errorf("stored pages (-want +got):\n%s\ncounters %+v\nerrors %v", diff, status.Counters, status.LastErrors)
			}
			if status.Counters.Stored != int64(len(want)) {
				t.Errorf("counters.stored: got %d, want %d", status.Counters.Stored, len(want))
			}

			// No page fetched twice, whatever spelling its links used; the
			// failing pages exactly as often as it takes to succeed.
			for path, n := range site.HitsByPath() {
				want := 1
				switch path {
				case testsite.PathFlaky:
					want = 3 // two 500s, then 200
				case testsite.PathBusy:
					want = 2 // 429 with Retry-After, then 200
				}
				if n > want {
					t.Errorf("hits of %s: got %d, want at most %d", path, n, want)
				}
			}
			if tc.robots {
				if n := site.Hits(testsite.PathPrivate); n != 0 {
					t.Errorf("robots.txt disallows %s but it was fetched %d times", testsite.PathPrivate, n)
				}
				if status.Counters.Skipped["robots"] == 0 && tc.depth >= 2 {
					t.Errorf("skipped[robots]: got 0, want the disallowed page counted")
				}
			}
			// The endless calendar is cut by depth.
			calendar := 0
			for path, n := range site.HitsByPath() {
				if strings.HasPrefix(path, "/calendar/") {
					calendar += n
				}
			}
			if calendar > 2*tc.depth {
				var paths []string
				for path := range site.HitsByPath() {
					if strings.HasPrefix(path, "/calendar/") {
						paths = append(paths, path)
					}
				}
				t.Errorf("calendar pages fetched: got %d %v, want at most %d (a month each way per level of depth)", calendar, paths, 2*tc.depth)
			}
			// Crawl-delay (50ms) between request starts to one host. The site
			// logs a request when its answer is done, so single gaps jitter
			// with the answer time; over the whole crawl the requests must
			// span at least (n-1) × 50ms, less the slowest answer (/slow, 200ms).
			if tc.robots {
				perHost := map[string][]time.Time{}
				for _, r := range site.Requests() {
					if r.Path != testsite.PathRobots {
						perHost[r.Host] = append(perHost[r.Host], r.At)
					}
				}
				for host, ts := range perHost {
					sort.Slice(ts, func(i, j int) bool { return ts[i].Before(ts[j]) })
					if len(ts) < 2 {
						continue
					}
					span, minSpan := ts[len(ts)-1].Sub(ts[0]), time.Duration(len(ts)-1)*50*time.Millisecond-250*time.Millisecond
					if span < minSpan {
						t.Errorf("%d requests to %s within %s, want at least %s apart overall (Crawl-delay 50ms)", len(ts), host, span, minSpan)
					}
				}
			}
			if tc.depth >= 2 && status.Counters.Skipped["too_large"] == 0 && site.Hits(testsite.PathHuge) > 0 {
				t.Errorf("skipped[too_large]: got 0, want /huge counted")
			}
			for _, ua := range site.Requests() {
				if ua.UserAgent != "kgsearch-test/1.0" {
					t.Errorf("request %s with User-Agent %q", ua.Path, ua.UserAgent)
					break
				}
			}
		})
	}
}

// TestTestsiteRecrawl checks conditional GET, changed and removed pages
// against the test site.
func TestTestsiteRecrawl(t *testing.T) {
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	st := openStore(t, freshDatabase(t))
	e := newEngine(t, st, engineOpts{retries: 3, allow: []string{site.Addr()}})
	runEngine(t, e)
	spec := Spec{URL: site.SeedURL(), MaxDepth: ptr(1), MaxPages: 1000, UseSitemap: ptr(false)}
	first := waitJob(t, e, createJob(t, st, spec), 60*time.Second)
	if first.Counters.Stored == 0 {
		t.Fatalf("first crawl stored nothing: %+v", first.Counters)
	}
	stored := storedURLs(t, st)
	var changed, removed string
	for _, u := range stored {
		if strings.Contains(u, "/articles/") && changed == "" {
			changed = u
		} else if strings.Contains(u, "/articles/") && removed == "" {
			removed = u
		}
	}
	if changed == "" || removed == "" {
		t.Fatalf("want two stored articles, got %v", stored)
	}
	site.Update(mustPath(changed))
	site.Remove(mustPath(removed))
	site.ResetCounts()

	spec.Recrawl = true
	re := waitJob(t, e, createJob(t, st, spec), 60*time.Second)
	if re.Counters.Deleted != 1 {
		t.Errorf("deleted: got %d, want 1 (%s answers 410)", re.Counters.Deleted, removed)
	}
	if re.Counters.Stored != 1 {
		t.Errorf("stored: got %d, want 1 (%s changed)", re.Counters.Stored, changed)
	}
	total := 0
	for _, n := range site.HitsByPath() {
		total += n
	}
	notModified := 0
	var full []string
	for _, u := range stored {
		path, _, _ := strings.Cut(mustPath(u), "?")
		n := site.NotModified(path)
		notModified += n
		if n == 0 {
			full = append(full, mustPath(u))
		}
	}
	// All but the seed (depth 0 < max_depth: fetched in full for its links),
	// the changed page and the removed one answer 304.
	if notModified != len(stored)-3 {
		t.Errorf("304 answers: got %d of %d stored pages, want %d; fetched in full: %v", notModified, len(stored), len(stored)-3, full)
	}
	doc, err := st.DocumentByURL(context.Background(), changed)
	if err != nil {
		t.Fatal(err)
	}
	chunks, err := st.DocumentChunks(context.Background(), doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, c := range chunks {
		text.WriteString(c.Text)
	}
	if !strings.Contains(text.String(), site.Marker(mustPath(changed))) {
		t.Errorf("chunks of %s do not contain the new marker %q", changed, site.Marker(mustPath(changed)))
	}
	if _, err := st.DocumentByURL(context.Background(), removed); err == nil {
		t.Errorf("%s answered 410 but is still stored", removed)
	}
	_ = fmt.Sprint(total)
}

func mustPath(u string) string {
	i := strings.Index(u[len("http://"):], "/")
	return u[len("http://")+i:]
}
