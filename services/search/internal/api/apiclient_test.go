package api

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

// TestClientQueryFormMatchesGET holds pkg/apiclient to this API: a search written
// as URL query fields (kgeval's methods and -variant flags), read by
// apiclient.ParseSearchQuery and sent as the POST body, is the same pipeline
// request as the same fields sent to GET.
func TestClientQueryFormMatchesGET(t *testing.T) {
	raws := []string{
		"q=a+b&k=7&explain=true",
		"q=a+b&k=7&explain=true&expand=false&weights=bm25:1",
		"q=a+b&k=10&explain=true&expand=false&fusion=rrf&weights=vector:1,bm25:1",
		"q=x&weights=vector:0.35,bm25:0.2,recency:0.1,title:0.1&tags=django-docs",
		"q=x&tags=a,b&tag=c&mmr=0.7&offset=3&domain=docs.python.org",
		"q=x&mmr=false&published_after=2024-01-01&published_before=2025-01-31T10:00:00Z",
		"q=x&k=",
		"q=x&history=keep&generated=KEEP&format=json",
		"q=x&history=demote&generated=demote",
	}
	// Every parameter of GET appears in a case above, so that a field added to the
	// API and not to the client (or sent under another name) fails here.
	seen := map[string]bool{}
	for _, raw := range raws {
		v, _ := url.ParseQuery(raw)
		for name := range v {
			seen[name] = true
		}
	}
	for _, name := range searchParams.Names {
		if !seen[name] {
			t.Errorf("no case gives %s", name)
		}
	}
	for _, raw := range raws {
		v, err := url.ParseQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		get, err := fromQuery(v).request()
		if err != nil {
			t.Fatalf("%s: GET: %v", raw, err)
		}
		cr, err := apiclient.ParseSearchQuery(v)
		if err != nil {
			t.Fatalf("%s: ParseSearchQuery: %v", raw, err)
		}
		body, err := json.Marshal(cr)
		if err != nil {
			t.Fatal(err)
		}
		f, err := fromBody(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: POST body %s: %v", raw, body, err)
		}
		post, err := f.request()
		if err != nil {
			t.Fatalf("%s: POST body %s: %v", raw, body, err)
		}
		if diff := cmp.Diff(get, post); diff != "" {
			t.Errorf("%s: GET and POST requests differ (-GET +POST):\n%s", raw, diff)
		}
	}
}

// TestClientResponseMatchesTheService holds apiclient.SearchResponse, the clients'
// copy of the answer's JSON shape, to the service's: the JSON golden answer
// (written from pipeline.Response), read by the client's type and written again,
// gives only fields the service wrote, with the same values. A field renamed on
// one side comes back under a name the service did not write.
func TestClientResponseMatchesTheService(t *testing.T) {
	golden, err := os.ReadFile("../pipeline/testdata/response.json.golden")
	if err != nil {
		t.Fatal(err)
	}
	var client apiclient.SearchResponse
	if err := json.Unmarshal(golden, &client); err != nil {
		t.Fatal(err)
	}
	again, err := json.Marshal(client)
	if err != nil {
		t.Fatal(err)
	}
	var service, read any
	if err := json.Unmarshal(golden, &service); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &read); err != nil {
		t.Fatal(err)
	}
	if len(client.Results) == 0 || client.Explain == nil || len(client.Explain.Retrievers) == 0 {
		t.Fatalf("the golden answer lacks results or explain: %s", again)
	}
	subset(t, "answer", read, service)
}

// subset reports every value of got (nulls aside) that want lacks or holds
// differently.
func subset(t *testing.T, path string, got, want any) {
	t.Helper()
	switch g := got.(type) {
	case nil:
	case map[string]any:
		w, ok := want.(map[string]any)
		if !ok {
			t.Errorf("%s: the client reads an object, the service wrote %v", path, want)
			return
		}
		for k, v := range g {
			wv, ok := w[k]
			if !ok && v != nil {
				t.Errorf("%s.%s: the client reads a field the service does not write", path, k)
				continue
			}
			subset(t, path+"."+k, v, wv)
		}
	case []any:
		w, ok := want.([]any)
		if !ok || len(w) != len(g) {
			t.Errorf("%s: the client reads %d items, the service wrote %v", path, len(g), want)
			return
		}
		for i := range g {
			subset(t, path+"["+strconv.Itoa(i)+"]", g[i], w[i])
		}
	default:
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the client reads %v, the service wrote %v", path, got, want)
		}
	}
}
