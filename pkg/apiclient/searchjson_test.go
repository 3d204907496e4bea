package apiclient

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestParseSearchQuery(t *testing.T) {
	v, err := url.ParseQuery("q=x&k=7&offset=2&tags=a,+b&tag=c&domain=d.org&published_after=2024-01-01&published_before=2025-01-01" +
		"&weights=bm25:1&fusion=rrf&mmr=0.7&expand=false&explain=true&format=json")
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseSearchQuery(v)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%s|%d|%d|%s|%s|%s|%s|%s|%s|%v|%v|%v|%s", r.Q, r.K, r.Offset, strings.Join(r.Tags, ","), r.Domain,
		r.PublishedAfter, r.PublishedBefore, r.Weights, r.Fusion, *r.MMR, *r.Expand, r.Explain, r.Format)
	if want := "x|7|2|a,b,c|d.org|2024-01-01|2025-01-01|bm25:1|rrf|0.7|false|true|json"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if r, err := ParseSearchQuery(url.Values{"mmr": {"false"}, "k": {""}}); err != nil || r.MMR != nil || r.K != 0 {
		t.Errorf("mmr=false, k empty: got %+v, %v; want both unset", r, err)
	}
	for _, bad := range []string{"weigths=bm25:1", "k=seven", "offset=1.5", "mmr=lots", "expand=maybe", "explain=2"} {
		v, _ := url.ParseQuery(bad)
		if _, err := ParseSearchQuery(v); err == nil || !strings.Contains(err.Error(), strings.SplitN(bad, "=", 2)[0]) {
			t.Errorf("%s: got %v, want an error naming the parameter", bad, err)
		}
	}
}

func TestSearchJSONAndIndexStatus(t *testing.T) {
	var gotBody, gotQuery string
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/search", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotBody, gotQuery = string(b), r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"query":{"normalized":"x y","entities":[{"text":"x","type":"library","confidence":0.9}],"intent":"howto"},
			"results":[{"rank":1,"url":"http://h/a","title":"A","score":0.8,"source":"vector+bm25","chunk_id":"c1","start":3,"end":9,
			"score_breakdown":{"vector":0.5,"graph":0.25,"bm25":0.125,"recency":0.0625,"title":1}}],
			"result_count":1,"total_time_ms":12.5,"degraded":["graph"],"unknown_field":true,
			"explain":{"weights":"vector:1","fusion":"weighted","retrievers":{"bm25":{"hits":4,"took_ms":1.5}},"notes":["n"]}}`)
	})
	mux.HandleFunc("GET /api/v1/status", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"index_lag":3,"indexed_chunks":9,"documents":2,"caught_up":false,"reindexing":true,"model":"m"}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := NewSearch(srv.URL, nil, "")
	ans, err := c.SearchJSON(context.Background(), SearchRequest{Q: "x y", K: 3, Format: "toon"})
	if err != nil {
		t.Fatal(err)
	}
	if gotQuery != "format=json" || gotBody != `{"q":"x y","k":3}` {
		t.Errorf("request: ?%s %s", gotQuery, gotBody)
	}
	r := ans.Results[0]
	b := r.ScoreBreakdown.Map()
	if ans.Query.Normalized != "x y" || ans.Query.Entities[0].Type != "library" || r.URL != "http://h/a" || r.Start != 3 ||
		b["vector"] != 0.5 || b["graph"] != 0.25 || b["bm25"] != 0.125 || b["recency"] != 0.0625 || b["title"] != 1 || len(b) != 5 ||
		ans.Degraded[0] != "graph" || ans.Explain.Retrievers["bm25"].Hits != 4 || ans.Explain.Notes[0] != "n" {
		t.Errorf("decoded %+v", ans)
	}
	st, err := c.IndexStatus(context.Background())
	if err != nil || st.IndexLag != 3 || st.IndexedChunks != 9 || st.Documents != 2 || st.CaughtUp || !st.Reindexing {
		t.Errorf("status %+v, %v", st, err)
	}
}
