package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// freshDatabase creates kgsearch_test_<random> and drops it after the test.
func freshDatabase(t testing.TB) string {
	t.Helper()
	return testenv.FreshMariaDB(t)
}

const testDims = 64

func openStore(t testing.TB, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{
		DSN: dsn, Model: store.Model{Name: embedtest.ModelName, Dims: testDims},
		OutboxBackoff: func(int) time.Duration { return 10 * time.Millisecond },
	}, nil)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// sectionSplitter is a test Splitter: one piece per extractor section.
type sectionSplitter struct{}

func (sectionSplitter) Split(p *htmltext.Page) ([]pipeline.Piece, error) {
	var out []pipeline.Piece
	for _, s := range p.Sections {
		text := p.Text[s.Start:s.End]
		if strings.TrimSpace(text) == "" {
			continue
		}
		out = append(out, pipeline.Piece{Text: text, Tokens: len(strings.Fields(text)), Start: s.Start, End: s.End, HeadingPath: s.HeadingPath})
	}
	if len(out) == 0 && strings.TrimSpace(p.Text) != "" {
		out = append(out, pipeline.Piece{Text: p.Text, Tokens: len(strings.Fields(p.Text)), End: len(p.Text)})
	}
	return out, nil
}

type engineOpts struct {
	allow    []string
	workers  int
	lease    time.Duration
	retries  int
	owner    string
	maxPages int
	maxLinks int // links a page may queue; 0: the default
	resolver *net.Resolver
	canon    *canon.Options
	wrap     func(Store) Store // wraps the store the engine uses (not the indexer's)
}

// newEngine builds an engine on st fetching through the SSRF guard (allowing
// opts.allow, default 127.0.0.1 for httptest sites).
func newEngine(t testing.TB, st *store.Store, o engineOpts) *Engine {
	t.Helper()
	if o.allow == nil {
		o.allow = []string{"127.0.0.1"}
	}
	if o.workers == 0 {
		o.workers = 4
	}
	if o.lease == 0 {
		o.lease = 3 * time.Second
	}
	g, err := netguard.New(netguard.Options{Allow: o.allow, Resolver: o.resolver, ResponseHeaderTimeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("netguard.New: %v", err)
	}
	f, err := fetch.New(fetch.Config{
		UserAgent: "kgsearch-test/1.0", Guard: g, Timeout: 2 * time.Second,
		Retries: o.retries, RetryBackoff: 10 * time.Millisecond, HostParallel: 4, MaxBodyBytes: 1 << 20,
	})
	if err != nil {
		t.Fatalf("fetch.New: %v", err)
	}
	p := pipeline.New(st, embedtest.NewHash(testDims), sectionSplitter{}, "test")
	if o.maxPages == 0 {
		o.maxPages = 1000
	}
	copts := canon.DefaultOptions()
	if o.canon != nil {
		copts = *o.canon
	}
	var es Store = st
	if o.wrap != nil {
		es = o.wrap(st)
	}
	return New(Config{
		Owner: o.owner, Workers: o.workers, Lease: o.lease, Poll: 50 * time.Millisecond,
		Limits: Limits{MaxPages: o.maxPages, MaxDepth: 50}, Canon: copts, MaxPageLinks: o.maxLinks,
	}, Deps{Store: es, Fetcher: f, Guard: g, Indexer: p}, nil, nil)
}

// runEngine runs e until the test ends (or stop is called) and returns stop,
// which waits for Run to return.
func runEngine(t testing.TB, e *Engine) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := e.Run(ctx); err != nil {
			t.Errorf("engine run: %v", err)
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

// createJob stores a normalised job spec.
func createJob(t testing.TB, st *store.Store, spec Spec) string {
	t.Helper()
	s, err := spec.Normalize(Limits{MaxPages: 1000, MaxDepth: 50}, canon.DefaultOptions())
	if err != nil {
		t.Fatalf("normalize spec: %v", err)
	}
	raw, _ := json.Marshal(s)
	job, err := st.CreateJob(context.Background(), raw, "")
	if err != nil {
		t.Fatalf("create job: %v", err)
	}
	return job.ID
}

// waitJob waits until the job is terminal and returns its status.
func waitJob(t testing.TB, e *Engine, id string, timeout time.Duration) Status {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		st, err := e.Status(context.Background(), id)
		if err != nil {
			t.Fatalf("job status: %v", err)
		}
		// A cancelled job is terminal at once; its owner sets finished_at when it stopped.
		if st.Status.Terminal() && st.FinishedAt != nil {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s still %s after %s: %+v", id, st.Status, timeout, st.Counters)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// storedPaths lists the paths of the stored documents of a host.
func storedPaths(t testing.TB, st *store.Store) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	after := ""
	for {
		page, err := st.ListDocuments(context.Background(), store.ListOptions{After: after, Limit: 1000})
		if err != nil {
			t.Fatalf("list documents: %v", err)
		}
		for _, d := range page.Documents {
			i := strings.Index(d.URL[len("http://"):], "/")
			out[d.URL[len("http://")+i:]] = true
		}
		if page.NextAfter == "" {
			return out
		}
		after = page.NextAfter
	}
}

// site is a small test website that counts requests per path.
type site struct {
	*httptest.Server
	mu     sync.Mutex
	hits   map[string]int
	pages  map[string]func(w http.ResponseWriter, r *http.Request)
	flakyN int // /flaky fails this many times first
}

func (s *site) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *site) allHits() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.hits {
		out[k] = v
	}
	return out
}

func page(title string, body string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html><html lang=en><head><title>%s</title></head><body><nav><a href=\"/\">Home</a></nav><main><h1>%s</h1><p>%s This paragraph has enough words to be kept as the main content of the page by the extractor.</p><ul>", title, title, body)
	for _, l := range links {
		fmt.Fprintf(&b, "<li><a href=\"%s\">link to %s</a></li>", l, l)
	}
	b.WriteString("</ul></main><footer>Copyright footer text</footer></body></html>")
	return b.String()
}

func htmlHandler(body string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
}

// newSite serves pages; paths not in pages answer 404. robots.txt and the
// sitemap are part of pages when the test wants them.
func newSite(t testing.TB, pages map[string]func(w http.ResponseWriter, r *http.Request)) *site {
	t.Helper()
	s := &site{hits: map[string]int{}, pages: pages}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.Path
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		s.mu.Lock()
		s.hits[key]++
		s.mu.Unlock()
		h, ok := s.pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}
