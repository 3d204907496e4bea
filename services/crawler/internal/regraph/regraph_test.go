package regraph

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/kgapi/kgapitest"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// fakeDocs pages through docs two at a time, like ListDocuments' keyset paging.
type fakeDocs struct{ docs []store.Document }

func (f fakeDocs) ListDocuments(_ context.Context, o store.ListOptions) (store.DocumentPage, error) {
	var out store.DocumentPage
	for _, d := range f.docs {
		if d.ID > o.After && (o.Domain == "" || d.Domain == o.Domain) && len(out.Documents) < 2 {
			out.Documents = append(out.Documents, d)
		}
	}
	if len(out.Documents) == 2 {
		out.NextAfter = out.Documents[1].ID
	}
	return out, nil
}

// fakeFetcher serves a small HTML page per URL, 404 for "gone" URLs.
type fakeFetcher struct{}

func (fakeFetcher) Fetch(_ context.Context, req fetch.Request) (*fetch.Response, error) {
	if req.URL == "http://docs.test/gone" {
		return &fetch.Response{URL: req.URL, Status: http.StatusNotFound}, nil
	}
	body := fmt.Sprintf("<html><head><title>%s</title></head><body><p>Text of %s.</p></body></html>", req.URL, req.URL)
	return &fetch.Response{URL: req.URL, Status: 200, ContentType: "text/html; charset=utf-8", Body: []byte(body), Header: http.Header{}}, nil
}

// fakePayloads reports "changed" for one URL and builds a one-chunk payload otherwise.
type fakePayloads struct{}

func (fakePayloads) KGPayload(in pipeline.Page) (kgapi.Document, error) {
	if in.URL == "http://docs.test/changed" {
		return kgapi.Document{}, fmt.Errorf("kg payload of %s: %w", in.URL, pipeline.ErrChanged)
	}
	return kgapi.Document{ID: in.Previous.ID, URL: in.URL, Chunks: []kgapi.Chunk{{ID: "1", Text: in.Extracted.Text}}}, nil
}

func TestRun(t *testing.T) {
	docs := fakeDocs{docs: []store.Document{
		{ID: "a", URL: "http://docs.test/a", Domain: "docs.test"},
		{ID: "b", URL: "http://docs.test/b", Domain: "docs.test"},
		{ID: "c", URL: "http://docs.test/changed", Domain: "docs.test"},
		{ID: "d", URL: "http://docs.test/gone", Domain: "docs.test"},
		{ID: "e", URL: "http://docs.test/refused", Domain: "docs.test"},
		{ID: "f", URL: "http://other.test/f", Domain: "other.test"},
	}}
	tests := []struct {
		name      string
		opt       Options
		delivered []string // URLs kg received
		want      Report
	}{
		{"all", Options{}, []string{"http://docs.test/a", "http://docs.test/b", "http://other.test/f"},
			Report{Documents: 6, Delivered: 3, Chunks: 3,
				Changed: []string{"http://docs.test/changed", "http://docs.test/gone"},
				Failed: []string{"http://docs.test/refused: kg ingest: ingest document e: kg service unavailable: 503 Service Unavailable: " +
					"the graph database (Neo4j) is unavailable; retry later"}}},
		{"one domain", Options{Domain: "other.test"}, []string{"http://other.test/f"},
			Report{Documents: 1, Delivered: 1, Chunks: 1, Changed: []string{}, Failed: []string{}}},
		{"dry run sends nothing", Options{DryRun: true}, nil,
			Report{Documents: 6, Delivered: 4, Chunks: 4,
				Changed: []string{"http://docs.test/changed", "http://docs.test/gone"}, Failed: []string{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kg := kgapitest.New(t)
			kg.FailIngest("http://docs.test/refused")
			got, err := Run(context.Background(), docs, fakeFetcher{}, fakePayloads{}, kgapi.NewClient(kg.URL, nil, ""), tt.opt, nil)
			if err != nil {
				t.Fatal(err)
			}
			got.TookMS = 0
			slices.Sort(got.Changed)
			slices.Sort(got.Failed)
			var delivered []string
			for _, d := range kg.Ingested() {
				delivered = append(delivered, d.URL)
			}
			slices.Sort(delivered)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.delivered, delivered); diff != "" {
				t.Errorf("ingested (-want +got):\n%s", diff)
			}
		})
	}
}
