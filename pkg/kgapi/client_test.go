package kgapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestClient(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/entities/match", func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer k" {
			t.Errorf("authorization: got %q, want Bearer k", got)
		}
		var req MatchRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Fatal(err)
		}
		_ = json.NewEncoder(w).Encode(MatchResponse{Chunks: []ChunkMatch{{ChunkID: "c1", DocumentID: "d1", Score: 0.5, Matched: req.Entities}}})
	})
	mux.HandleFunc("POST /api/v1/expand/entities", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"title":"invalid request","detail":"max_hops must be 1 or 2","field":"max_hops"}`))
	})
	mux.HandleFunc("POST /api/v1/parse", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	mux.HandleFunc("POST /api/v1/ingest", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusRequestTimeout) // a proxy in front of kg gave up waiting for the body
	})
	mux.HandleFunc("DELETE /api/v1/documents/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := NewClient(srv.URL+"/", nil, "k")
	ctx := context.Background()

	got, err := c.Match(ctx, MatchRequest{Entities: []string{"python"}})
	if err != nil {
		t.Fatalf("match: %v", err)
	}
	want := &MatchResponse{Chunks: []ChunkMatch{{ChunkID: "c1", DocumentID: "d1", Score: 0.5, Matched: []string{"python"}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("match (-want +got):\n%s", diff)
	}

	_, err = c.Expand(ctx, ExpandRequest{Entities: []string{"x"}, MaxHops: 9})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 400 || se.Detail != "max_hops must be 1 or 2" {
		t.Errorf("expand: got %v, want a 400 StatusError with the detail", err)
	}
	if errors.Is(err, ErrUnavailable) {
		t.Errorf("a 4xx must not count as unavailable")
	}

	if _, err := c.Parse(ctx, "q"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("parse on 503: got %v, want ErrUnavailable", err)
	}
	if _, err := c.Ingest(ctx, Document{ID: "d1"}); !errors.Is(err, ErrUnavailable) || errors.As(err, &se) {
		t.Errorf("ingest on 408: got %v, want ErrUnavailable (a timeout, not a refusal)", err)
	}
	if err := c.DeleteDocument(ctx, "d/1"); err != nil {
		t.Errorf("delete of an unknown document: got %v, want nil", err)
	}
	srv.Close()
	if _, err := c.Match(ctx, MatchRequest{Entities: []string{"x"}}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("server down: got %v, want ErrUnavailable", err)
	}
}

func TestClientEntity(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/entities/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "c++ lang" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"title":"not found","detail":"no entity"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(Entity{EntityRef: EntityRef{ID: "cpp", Name: "C++", Type: "programming_language"},
			Aliases: []string{"cpp"}, Relations: []Relation{{Type: "USES", Direction: "out", Other: EntityRef{ID: "c"}, Weight: 2}}})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := NewClient(srv.URL, nil, "")
	got, err := c.Entity(context.Background(), "c++ lang")
	if err != nil {
		t.Fatalf("entity: %v", err)
	}
	if got.ID != "cpp" || len(got.Relations) != 1 || got.Relations[0].Other.ID != "c" {
		t.Errorf("entity: got %+v", got)
	}
	_, err = c.Entity(context.Background(), "nope")
	var se *StatusError
	if !errors.As(err, &se) || se.Status != http.StatusNotFound {
		t.Errorf("unknown entity: got %v, want a 404 StatusError", err)
	}
}

// A 4xx answer's detail is the problem's detail, else its title, else the
// answer's first bytes.
func TestProblemDetail(t *testing.T) {
	cases := map[string]string{
		`{"title":"not found","detail":"no such entity"}`: "no such entity",
		`{"title":"not found"}`:                           "not found",
		"  plain text answer \n":                          "plain text answer",
		`{}`:                                              "{}",
	}
	for body, want := range cases {
		if got := problemDetail(404, []byte(body)); got != want {
			t.Errorf("%q: got %q, want %q", body, got, want)
		}
	}
}
