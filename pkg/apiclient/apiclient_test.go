package apiclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestErrorsKeepTheProblem(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/search", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("format") != "json" || r.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("request: format %q auth %q", r.URL.Query().Get("format"), r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(400)
		fmt.Fprint(w, `{"title":"invalid request","status":400,"detail":"must be in 1..100","field":"k"}`)
	})
	mux.HandleFunc("GET /api/v1/crawls/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(502)
		fmt.Fprint(w, "bad gateway")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()

	_, _, err := NewSearch(srv.URL, nil, "k").Search(ctx, SearchRequest{Q: "x", K: 500, Format: "json"})
	var e *Error
	if !errors.As(err, &e) || e.Status != 400 || e.Field != "k" || e.Detail != "must be in 1..100" || StatusOf(err) != 400 {
		t.Errorf("400: got %#v", err)
	}
	_, err = NewCrawler(srv.URL, nil, "").Crawl(ctx, "j")
	if !errors.As(err, &e) || e.Status != 502 || e.Detail != "bad gateway" || e.Service != "crawler" {
		t.Errorf("502: got %#v", err)
	}
	srv.Close()
	if _, err := NewCrawler(srv.URL, nil, "").Crawl(ctx, "j"); !errors.Is(err, ErrUnreachable) {
		t.Errorf("closed server: got %v, want ErrUnreachable", err)
	}
}

func TestEventsReadTheStreamToTheSummary(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": comment\n\n")
		fmt.Fprint(w, "event: progress\ndata: {\"type\":\"progress\",\"job_id\":\"j\",\"status\":{\"id\":\"j\",\"status\":\"running\"}}\n\n")
		fmt.Fprint(w, "event: page\ndata: {\"type\":\"page\",\"job_id\":\"j\",\"url\":\"u\",\"outcome\":\"stored\"}\n\n")
		fmt.Fprint(w, "event: summary\ndata: {\"type\":\"summary\",\"job_id\":\"j\",\"status\":{\"id\":\"j\",\"status\":\"done\",\"counters\":{\"stored\":1}}}\n\n")
	}))
	defer srv.Close()
	var types []string
	final, err := NewCrawler(srv.URL, nil, "").Events(context.Background(), "j", func(ev Event) error {
		types = append(types, ev.Type)
		return nil
	})
	if err != nil || final == nil || final.Status != "done" || final.Counters.Stored != 1 || !final.Terminal() {
		t.Fatalf("events: %v %+v", err, final)
	}
	if fmt.Sprint(types) != "[progress page summary]" {
		t.Errorf("event types: %v", types)
	}
	// A stream that ends without a summary is an error.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "data: {\"type\":\"page\"}\n\n")
	}))
	defer cut.Close()
	if _, err := NewCrawler(cut.URL, nil, "").Events(context.Background(), "j", func(Event) error { return nil }); err == nil {
		t.Error("a stream without a summary: want an error")
	}
}

func TestInProcess(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"documents":[],"next_after":%q}`, r.URL.Query().Get("after"))
	})
	page, err := NewCrawler("http://in-process", InProcess(h), "").Documents(context.Background(), "", "abc", 10)
	if err != nil || page.NextAfter != "abc" {
		t.Errorf("in process: %v %+v", err, page)
	}
}

func TestCrawlsAndDocumentsLists(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/crawls", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer ck" {
			t.Errorf("crawls: auth %q", r.Header.Get("Authorization"))
		}
		fmt.Fprintf(w, `{"crawls":[{"id":"a","status":"running","spec":{"max_pages":%s},"counters":{"stored":3,"failed_by_reason":{"http_404":2}}},{"id":"b","status":"done"}]}`,
			r.URL.Query().Get("limit"))
	})
	mux.HandleFunc("GET /api/v1/documents", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		fmt.Fprintf(w, `{"documents":[{"id":"d1","domain":%q,"chunk_count":4}],"next_after":%q}`, q.Get("domain"), q.Get("after")+"+"+q.Get("limit"))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := NewCrawler(srv.URL, nil, "ck")
	jobs, err := c.Crawls(context.Background(), 20)
	if err != nil || len(jobs) != 2 || jobs[0].ID != "a" || jobs[0].Spec.MaxPages != 20 || jobs[0].Counters.Stored != 3 ||
		jobs[0].Counters.FailedBy["http_404"] != 2 || jobs[0].Terminal() || !jobs[1].Terminal() {
		t.Fatalf("crawls: %v %+v", err, jobs)
	}
	page, err := c.Documents(context.Background(), "site.test", "d0", 50)
	if err != nil || len(page.Documents) != 1 || page.Documents[0].Domain != "site.test" || page.Documents[0].ChunkCount != 4 || page.NextAfter != "d0+50" {
		t.Fatalf("documents: %v %+v", err, page)
	}
}

func TestEventStreamIsRelayedRaw(t *testing.T) {
	const stream = ": hi\n\nevent: page\ndata: {\"type\":\"page\"}\n\n"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/crawls/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "j" {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"title":"not found","detail":"crawl job not found"}`)
			return
		}
		if r.Header.Get("Accept") != "text/event-stream" || r.Header.Get("Authorization") != "Bearer ck" {
			t.Errorf("events: accept %q auth %q", r.Header.Get("Accept"), r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, stream)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := NewCrawler(srv.URL, nil, "ck")
	body, err := c.EventStream(context.Background(), "j")
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(body)
	_ = body.Close()
	if err != nil || string(data) != stream {
		t.Errorf("stream: %v %q", err, data)
	}
	_, err = c.EventStream(context.Background(), "nope")
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusNotFound || e.Detail != "crawl job not found" {
		t.Errorf("unknown job: got %#v", err)
	}
}
