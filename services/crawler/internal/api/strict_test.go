package api

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/engine"
)

func (f fakeJobs) CreateJob(context.Context, json.RawMessage, string) (store.Job, error) {
	return store.Job{ID: "new"}, nil
}

type oneDocument struct{ emptyDocuments }

func (oneDocument) GetDocument(_ context.Context, id string) (store.Document, error) {
	return store.Document{ID: id, URL: "https://docs.example/a"}, nil
}

func (oneDocument) DocumentChunks(context.Context, string) ([]store.Chunk, error) { return nil, nil }

// fakeBlocklist records what it was asked to block or unblock.
type fakeBlocklist struct{ got *[]string }

func (fakeBlocklist) BlockedDomains(context.Context) ([]store.BlockedDomain, error) { return nil, nil }
func (b fakeBlocklist) BlockDomain(_ context.Context, d, r string) (store.BlockedDomain, error) {
	*b.got = append(*b.got, "block "+d)
	return store.BlockedDomain{Domain: d, Reason: r, CreatedAt: time.Now()}, nil
}

func (b fakeBlocklist) UnblockDomain(_ context.Context, d string) error {
	*b.got = append(*b.got, "unblock "+d)
	return nil
}

// TestRequestsReadStrictly: on every route an unknown URL parameter, a repeated
// one, an after that is not a document id, a chunks that is not a boolean and a
// URL where a host name is wanted are 400s naming the parameter or field; a body
// declared as anything but JSON is a 415. The fakes stand for the engine and
// MariaDB; the good requests beside the bad ones show the routes work.
func TestRequestsReadStrictly(t *testing.T) {
	var calls []string
	done := func() (engine.Status, error) { return engine.Status{ID: "j", Status: store.JobDone}, nil }
	base := fakeAPI(t, Deps{Crawls: &fakeCrawls{answers: []func() (engine.Status, error){done}},
		Jobs: fakeJobs{}, Documents: oneDocument{}, Blocklist: fakeBlocklist{got: &calls}})
	docID := store.DocumentID("https://docs.example/a")
	for _, tc := range []struct {
		method, path, ct, body string
		status                 int
		field, detail          string
	}{
		{"GET", "/api/v1/crawls?status=done&limit=5", "", "", 200, "", ""},
		{"GET", "/api/v1/crawls?status=done&status=failed", "", "", 400, "status", "given 2 times"},
		{"GET", "/api/v1/crawls?foo=bar", "", "", 400, "foo", "the parameters are status, limit"},
		{"GET", "/api/v1/crawls?format=xml", "", "", 400, "format", "unknown parameter"},
		{"GET", "/api/v1/crawls?state=done", "", "", 400, "state", `did you mean "status"`},
		{"GET", "/api/v1/crawls?status=done%zz", "", "", 400, "query", "not valid URL encoding"},
		{"GET", "/api/v1/crawls/j", "", "", 200, "", ""},
		{"GET", "/api/v1/crawls/j?verbose=1", "", "", 400, "verbose", "takes no URL parameters"},
		{"GET", "/api/v1/crawls/j/events?since=1", "", "", 400, "since", "takes no URL parameters"},
		{"DELETE", "/api/v1/crawls/j?force=true", "", "", 400, "force", "takes no URL parameters"},
		{"GET", "/api/v1/documents?after=" + docID + "&limit=5&domain=docs.example", "", "", 200, "", ""},
		{"GET", "/api/v1/documents?after=garbage", "", "", 400, "after", "the next_after of the previous page"},
		{"GET", "/api/v1/documents?after=" + strings.ToUpper(docID), "", "", 400, "after", "32 lower-case hex digits"},
		{"GET", "/api/v1/documents?cursor=" + docID, "", "", 400, "cursor", `did you mean "after"`},
		{"GET", "/api/v1/documents/" + docID + "?chunks=false", "", "", 200, "", ""},
		{"GET", "/api/v1/documents/" + docID + "?chunks=1", "", "", 200, "", ""},
		{"GET", "/api/v1/documents/" + docID + "?chunks=maybe", "", "", 400, "chunks", "want true or false"},
		{"GET", "/api/v1/documents/" + docID + "?chunks=true&chunks=true", "", "", 400, "chunks", "given 2 times"},
		{"DELETE", "/api/v1/documents?domain=docs.example&limit=1", "", "", 200, "", ""},
		{"DELETE", "/api/v1/documents?domain=docs.example&all=1", "", "", 400, "all", "the parameters are domain, limit"},
		{"DELETE", "/api/v1/documents?domain=https://docs.example/a", "", "", 400, "domain", "not a URL (for this URL: docs.example)"},
		{"DELETE", "/api/v1/documents?domain=docs.example:8080", "", "", 400, "domain", "give domain=docs.example (it covers every port"},
		{"GET", "/api/v1/documents?domain=%5B::1%5D:8080", "", "", 400, "domain", "give domain=::1 "},
		{"DELETE", "/api/v1/documents/" + docID + "?purge=1", "", "", 400, "purge", "takes no URL parameters"},
		{"GET", "/api/v1/chunks/1?with=doc", "", "", 400, "with", "takes no URL parameters"},
		{"GET", "/api/v1/blocklist?domain=x", "", "", 400, "domain", "takes no URL parameters"},
		{"POST", "/api/v1/blocklist", "application/json", `{"domain":"http://x/"}`, 400, "domain", "give a host name such as ads.example.com, not a URL (for this URL: x)"},
		{"POST", "/api/v1/blocklist", "application/json", `{"domain":"ads.example.com/path"}`, 400, "domain", "(for this URL: ads.example.com)"},
		{"POST", "/api/v1/blocklist", "application/json", `{"domain":"admin:s3cret@ads.example.com"}`, 400, "domain", "not a URL"},
		{"POST", "/api/v1/blocklist", "application/json", `{"domain":"http:x"}`, 400, "domain", "not a URL"},
		{"POST", "/api/v1/blocklist", "application/json", `{"domain":"ads.example.com:8080"}`, 201, "", ""},
		{"POST", "/api/v1/blocklist", "", `{"domain":"ads.example.com"}`, 201, "", ""},
		{"POST", "/api/v1/blocklist", "application/x-www-form-urlencoded", `{"domain":"ads.example.com"}`, 415, "Content-Type", "application/json"},
		{"POST", "/api/v1/blocklist?domain=x", "application/json", `{"domain":"ads.example.com"}`, 400, "domain", "reads its fields from the JSON body"},
		{"DELETE", "/api/v1/blocklist?domain=https://ads.example.com/", "", "", 400, "domain", "not a URL (for this URL: ads.example.com)"},
		{"DELETE", "/api/v1/blocklist?domain=a.example&domain=b.example", "", "", 400, "domain", "given 2 times"},
		{"DELETE", "/api/v1/blocklist?host=a.example", "", "", 400, "host", `did you mean "domain"`},
		{"DELETE", "/api/v1/blocklist", "text/plain", `{"domain":"a.example"}`, 415, "Content-Type", "not text/plain"},
		{"DELETE", "/api/v1/blocklist", "application/json", `{"domain":"a.example/x"}`, 400, "domain", "not a URL"},
		{"DELETE", "/api/v1/blocklist/a.example?force=1", "", "", 400, "force", "takes no URL parameters"},
		{"DELETE", "/api/v1/blocklist/a.example", "", "", 204, "", ""},
		{"POST", "/api/v1/crawls", "", `{"url":"https://docs.example/"}`, 202, "", ""},
		{"POST", "/api/v1/crawls", "application/json; charset=utf-8", `{"url":"https://docs.example/"}`, 202, "", ""},
		{"POST", "/api/v1/crawls", "text/plain", `{"url":"https://docs.example/"}`, 415, "Content-Type", "not text/plain"},
		{"POST", "/api/v1/crawls?url=https://docs.example/", "application/json", `{}`, 400, "url", "reads its fields from the JSON body"},
		{"POST", "/api/v1/pages", "text/plain", `{"url":"https://docs.example/"}`, 415, "Content-Type", "application/json"},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(tc.body))
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Field, Detail string }
		_ = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != tc.status || p.Field != tc.field || !strings.Contains(p.Detail, tc.detail) {
			t.Errorf("%s %s (%s): got %d field %q %q, want %d field %q containing %q",
				tc.method, tc.path, tc.ct, resp.StatusCode, p.Field, p.Detail, tc.status, tc.field, tc.detail)
		}
		if strings.Contains(p.Detail, "s3cret") {
			t.Errorf("%s %s: the detail repeats the password: %q", tc.method, tc.path, p.Detail)
		}
	}
	want := "block ads.example.com:8080,block ads.example.com,unblock a.example"
	if got := strings.Join(calls, ","); got != want {
		t.Errorf("blocklist calls: got %s, want %s (a refused request must not reach the store)", got, want)
	}
}
