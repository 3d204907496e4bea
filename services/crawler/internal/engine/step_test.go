package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// Fakes for the engine's seams: the page step runs without MariaDB, network
// or model.

// fakeFetcher answers from a table of responses by URL.
type fakeFetcher struct {
	mu      sync.Mutex
	answers map[string]*fetch.Response
	fetched []string
}

func (f *fakeFetcher) Fetch(_ context.Context, req fetch.Request) (*fetch.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fetched = append(f.fetched, req.URL)
	r, ok := f.answers[req.URL]
	if !ok {
		return nil, fmt.Errorf("dial %s: connection refused", req.URL)
	}
	cp := *r
	cp.URL, cp.Duration, cp.Attempts = req.URL, time.Millisecond, 1
	return &cp, nil
}

func (f *fakeFetcher) RobotsSitemaps(context.Context, *url.URL) ([]string, error) { return nil, nil }

func (f *fakeFetcher) Sitemap(context.Context, []string, bool, int, int) ([]string, []error) {
	return nil, nil
}

func htmlAnswer(title string) *fetch.Response {
	return &fetch.Response{Status: 200, ContentType: "text/html; charset=utf-8", Header: http.Header{"Etag": {`"v1"`}},
		Body: []byte(page(title, "Words of the page body for the fake fetcher."))}
}

// refreshAnswer is a stub page whose <meta http-equiv="refresh"> has content.
func refreshAnswer(content string) *fetch.Response {
	return &fetch.Response{Status: 200, ContentType: "text/html; charset=utf-8", Body: []byte(`<!doctype html><html><head>` +
		`<meta http-equiv="refresh" content="` + content + `"><title>Moved</title></head>` +
		`<body><p>This page has moved. Redirecting you to its new address.</p></body></html>`)}
}

// fakeIndexer records the pages it is given and stores nothing.
type fakeIndexer struct {
	mu    sync.Mutex
	pages []string
	err   error
	calls *[]string // shared call log, to check the order of the stages
}

func (x *fakeIndexer) Index(_ context.Context, p pipeline.Page) (pipeline.Result, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.pages = append(x.pages, p.URL)
	if x.calls != nil {
		*x.calls = append(*x.calls, "index")
	}
	if x.err != nil {
		return pipeline.Result{Timings: pipeline.Timings{Embed: time.Millisecond}}, x.err
	}
	return pipeline.Result{Outcome: pipeline.Stored, Chunks: 2, Document: store.Document{URL: p.URL, Title: p.Extracted.Title},
		Timings: pipeline.Timings{Chunk: time.Millisecond, Embed: time.Millisecond, Store: time.Millisecond}}, nil
}

// fakeStore has no stored documents and an empty blocklist; the engine's
// other store methods are not used by the page step (calling one panics).
type fakeStore struct{ Store }

func (fakeStore) DocumentByURL(context.Context, string) (store.Document, error) {
	return store.Document{}, store.ErrNotFound
}

func (fakeStore) BlockedDomains(context.Context) ([]store.BlockedDomain, error) { return nil, nil }

type allowAll struct{}

func (allowAll) CheckURL(*url.URL) error { return nil }

func (x *fakeIndexer) Retag(_ context.Context, prev *store.Document, _ []string) (store.Document, string, error) {
	return *prev, "", nil
}

func fakeEngine(f *fakeFetcher, x *fakeIndexer) *Engine {
	return New(Config{Canon: canon.DefaultOptions()}, Deps{Store: fakeStore{}, Fetcher: f, Guard: allowAll{}, Indexer: x}, nil, nil)
}

func TestCrawlPageWithFakes(t *testing.T) {
	const site = "http://docs.example"
	for _, tc := range []struct {
		name    string
		answers map[string]*fetch.Response
		err     error // of the indexer
		want    string
		wantErr string // PageError reason, or "embed" for the indexer's error as it is
		fetched []string
		metrics map[string]float64
	}{
		{name: "stored", answers: map[string]*fetch.Response{site + "/a": htmlAnswer("A")},
			want: "stored", fetched: []string{site + "/a"}, metrics: map[string]float64{"fetched": 1, "stored": 1, "chunks": 2}},
		{name: "redirect on the same host", answers: map[string]*fetch.Response{
			site + "/a": {Status: 301, Location: site + "/b"}, site + "/b": htmlAnswer("B")},
			want: "stored", fetched: []string{site + "/a", site + "/b"}, metrics: map[string]float64{"fetched": 2, "stored": 1, "chunks": 2}},
		{name: "redirect out of scope", answers: map[string]*fetch.Response{site + "/a": {Status: 302, Location: "http://other.example/"}},
			wantErr: SkipRedirectOutOfScope, fetched: []string{site + "/a"}, metrics: map[string]float64{"fetched": 1}},
		// A redirect written in HTML ("Redirecting…" stubs of documentation sites)
		// is followed like a 3xx and the stub is never stored.
		{name: "meta refresh on the same host", answers: map[string]*fetch.Response{
			site + "/a": refreshAnswer("0; url=/b"), site + "/b": htmlAnswer("B")},
			want: "stored", fetched: []string{site + "/a", site + "/b"}, metrics: map[string]float64{"fetched": 2, "stored": 1, "chunks": 2}},
		{name: "meta refresh out of scope", answers: map[string]*fetch.Response{site + "/a": refreshAnswer("1;URL='http://other.example/'")},
			wantErr: SkipRedirectOutOfScope, fetched: []string{site + "/a"}, metrics: map[string]float64{"fetched": 1}},
		{name: "a page that reloads itself is a page", answers: map[string]*fetch.Response{site + "/a": refreshAnswer("300; url=/b")},
			want: "stored", fetched: []string{site + "/a"}, metrics: map[string]float64{"fetched": 1, "stored": 1, "chunks": 2}},
		{name: "not found", answers: map[string]*fetch.Response{site + "/a": {Status: 404}},
			wantErr: "http_404", fetched: []string{site + "/a"}, metrics: map[string]float64{"fetched": 1, "failed_http_4xx": 1}},
		{name: "not a page", answers: map[string]*fetch.Response{site + "/a": {Status: 200, ContentType: "application/pdf", Body: []byte("%PDF")}},
			wantErr: fetch.ReasonContentType, fetched: []string{site + "/a"}, metrics: map[string]float64{"fetched": 1, "skipped_content_type": 1}},
		{name: "embedding fails", answers: map[string]*fetch.Response{site + "/a": htmlAnswer("A")}, err: fmt.Errorf("%w: model busy", pipeline.ErrEmbed),
			wantErr: "embed", fetched: []string{site + "/a"}, metrics: map[string]float64{"fetched": 1, "failed_embed": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeFetcher{answers: tc.answers}
			x := &fakeIndexer{err: tc.err}
			e := fakeEngine(f, x)
			res, err := e.CrawlPage(context.Background(), site+"/a", []string{"t"})
			var pe *PageError
			switch {
			case tc.wantErr == "embed":
				if !errors.Is(err, pipeline.ErrEmbed) {
					t.Errorf("error: got %v, want the embedding error", err)
				}
			case tc.wantErr != "":
				if !errors.As(err, &pe) || pe.Reason != tc.wantErr {
					t.Errorf("error: got %v, want a PageError with reason %s", err, tc.wantErr)
				}
			case err != nil:
				t.Fatalf("CrawlPage: %v", err)
			default:
				if string(res.Outcome) != tc.want || res.Chunks != 2 || len(res.Timings) != 5 {
					t.Errorf("result: got %s with %d chunks and timings %v, want %s with 2 chunks and 5 stage times", res.Outcome, res.Chunks, res.Timings, tc.want)
				}
				if last := tc.fetched[len(tc.fetched)-1]; res.Document.URL != last || !slices.Equal(x.pages, []string{last}) {
					t.Errorf("stored %v as %s, want only the final URL %s", x.pages, res.Document.URL, last)
				}
			}
			if diff := cmp.Diff(tc.fetched, f.fetched); diff != "" {
				t.Errorf("fetched (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.metrics, pageMetrics(e)); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
}

// pageMetrics reads the page metrics that are not zero.
func pageMetrics(e *Engine) map[string]float64 {
	out := map[string]float64{}
	for k, v := range map[string]float64{
		"fetched": testutil.ToFloat64(e.m.fetched), "stored": testutil.ToFloat64(e.m.stored),
		"unchanged": testutil.ToFloat64(e.m.unchanged), "chunks": testutil.ToFloat64(e.m.chunks),
		"failed_http_4xx":      testutil.ToFloat64(e.m.failed.WithLabelValues("http_4xx")),
		"failed_embed":         testutil.ToFloat64(e.m.failed.WithLabelValues(FailEmbed)),
		"skipped_content_type": testutil.ToFloat64(e.m.skipped.WithLabelValues(fetch.ReasonContentType)),
	} {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// TestPageStepQueuesLinksBeforeStoring: a crawl's page step hands the
// extracted page to beforeStore before the indexer stores it, and a failure
// there fails the page as a store failure without storing it.
func TestPageStepQueuesLinksBeforeStoring(t *testing.T) {
	const u = "http://docs.example/a"
	pu, _ := url.Parse(u)
	var calls []string
	f := &fakeFetcher{answers: map[string]*fetch.Response{u: htmlAnswer("A")}}
	x := &fakeIndexer{calls: &calls}
	e := fakeEngine(f, x)
	d := e.runPage(context.Background(), pageJob{u: pu, req: fetch.Request{URL: u},
		beforeStore: func(p *htmltext.Page) error { calls = append(calls, "links:"+p.Title); return nil }})
	if d.out.state != store.FrontierDone || d.out.reason != DoneStored || d.out.chunks != 2 {
		t.Errorf("outcome: got %+v, want done/stored with 2 chunks", d.out)
	}
	if diff := cmp.Diff([]string{"links:A", "index"}, calls); diff != "" {
		t.Errorf("stage order (-want +got):\n%s", diff)
	}
	if d.stages.Fetch <= 0 || d.stages.Store <= 0 {
		t.Errorf("stage times: got %+v, want fetch and store timed", d.stages)
	}

	calls = nil
	d = e.runPage(context.Background(), pageJob{u: pu, req: fetch.Request{URL: u},
		beforeStore: func(*htmltext.Page) error { return errors.New("enqueue: invalid connection") }})
	if d.out.state != store.FrontierFailed || d.out.reason != FailStore || len(calls) != 0 {
		t.Errorf("links not queued: got %+v and calls %v, want failed/store and nothing stored", d.out, calls)
	}
}
