package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// TestDeleteDomainThroughAPI: DELETE /documents?domain= removes a host's
// documents in batches of limit, tells kg through the outbox for each, leaves
// other hosts' documents alone and says when nothing is left.
func TestDeleteDomainThroughAPI(t *testing.T) {
	site := docsSite(t)
	f := newFixture(t, []string{"127.0.0.1", "localhost"})
	other := strings.Replace(site.URL, "127.0.0.1", "localhost", 1)
	for _, u := range []string{site.URL + "/json", site.URL + "/http", site.URL + "/", other + "/json"} {
		if code, res, _ := f.do(t, http.MethodPost, "/api/v1/pages", fmt.Sprintf(`{"url":%q}`, u)); code != http.StatusOK {
			t.Fatalf("POST /pages %s: got %d %v", u, code, res)
		}
	}

	// Documents are kept per host: host:port (as the site's URL has it) is
	// refused the same way by GET and DELETE, naming the host to give, and
	// nothing is deleted; the host lists the site's documents.
	hostPort := strings.TrimPrefix(site.URL, "http://")
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		code, res, _ := f.do(t, m, "/api/v1/documents?domain="+hostPort, "")
		if detail, _ := res["detail"].(string); code != http.StatusBadRequest || res["field"] != "domain" || !strings.Contains(detail, "give domain=127.0.0.1 ") {
			t.Errorf("%s /documents?domain=%s: got %d %v, want 400 naming the host 127.0.0.1", m, hostPort, code, res)
		}
	}
	code, res, _ := f.do(t, http.MethodGet, "/api/v1/documents?domain=127.0.0.1", "")
	if docs, _ := res["documents"].([]any); code != http.StatusOK || len(docs) != 3 {
		t.Fatalf("GET /documents?domain=127.0.0.1: got %d %v, want the 3 documents of the site", code, res)
	}
	code, res, _ = f.do(t, http.MethodGet, "/api/v1/documents?domain=LocalHost.", "")
	if docs, _ := res["documents"].([]any); code != http.StatusOK || len(docs) != 1 {
		t.Errorf("GET /documents?domain=LocalHost.: got %d %v, want the localhost document (the host as a user may type it)", code, res)
	}

	code, res, _ = f.do(t, http.MethodDelete, "/api/v1/documents?domain=127.0.0.1&limit=2", "")
	if code != http.StatusOK || res["domain"] != "127.0.0.1" || res["deleted"] != float64(2) || res["more"] != true {
		t.Fatalf("first batch: got %d %v, want 2 deleted and more", code, res)
	}
	code, res, _ = f.do(t, http.MethodDelete, "/api/v1/documents?domain=127.0.0.1", "")
	if code != http.StatusOK || res["deleted"] != float64(1) || res["more"] != false {
		t.Fatalf("second batch: got %d %v, want the last one deleted and no more", code, res)
	}
	// The host as a user may type it: case and a trailing dot do not matter.
	code, res, _ = f.do(t, http.MethodDelete, "/api/v1/documents?domain=LOCALHOST.", "")
	if code != http.StatusOK || res["domain"] != "localhost" || res["deleted"] != float64(1) {
		t.Fatalf("LOCALHOST.: got %d %v, want the localhost document deleted", code, res)
	}
	page, err := f.st.ListDocuments(context.Background(), store.ListOptions{Limit: 10})
	if err != nil || len(page.Documents) != 0 {
		t.Fatalf("documents left: %v %v", page.Documents, err)
	}
	items, err := f.st.OutboxItems(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	deletes := map[string]bool{}
	for _, it := range items {
		if it.Kind == store.OutboxDelete {
			deletes[it.DocumentID] = true
		}
	}
	for _, u := range []string{site.URL + "/json", site.URL + "/http", site.URL + "/", other + "/json"} {
		if !deletes[store.DocumentID(u)] {
			t.Errorf("no outbox delete for %s: kg would keep its part", u)
		}
	}

	for _, q := range []string{"", "?domain=", "?domain=%20", "?domain=a%20b", "?domain=127.0.0.1&limit=0"} {
		code, res, _ := f.do(t, http.MethodDelete, "/api/v1/documents"+q, "")
		want := "domain"
		if strings.Contains(q, "limit") {
			want = "limit"
		}
		if code != http.StatusBadRequest || res["field"] != want {
			t.Errorf("DELETE /documents%s: got %d %v, want 400 naming %s", q, code, res, want)
		}
	}
}

// fakeJobs lists one job per status given.
type fakeJobs struct {
	Jobs
	jobs map[store.JobStatus][]store.Job
}

func (f fakeJobs) ListJobs(_ context.Context, s store.JobStatus, _ int) ([]store.Job, error) {
	return f.jobs[s], nil
}

// TestDeleteDomainRefusedWhileACrawlCoversIt: a queued or running crawl would
// store the pages again, so the delete is refused with a 409 naming the job;
// a crawl of another host does not stand in the way.
func TestDeleteDomainRefusedWhileACrawlCoversIt(t *testing.T) {
	spec := func(s string) json.RawMessage { return json.RawMessage(s) }
	jobs := fakeJobs{jobs: map[store.JobStatus][]store.Job{
		store.JobRunning: {{ID: "run1", Spec: spec(`{"url":"https://other.example/"}`)}},
		store.JobQueued:  {{ID: "q1", Spec: spec(`{"url":"https://www.example.org/start","allowed_domains":["api.example.net"]}`)}},
	}}
	base := fakeAPI(t, Deps{Jobs: jobs, Documents: emptyDocuments{}})
	for domain, want := range map[string]int{"example.org": http.StatusConflict, "API.example.net": http.StatusConflict, "docs.example.com": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodDelete, base+"/api/v1/documents?domain="+domain, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("DELETE domain=%s: got %d %v, want %d", domain, resp.StatusCode, body, want)
		}
		if want == http.StatusConflict && !strings.Contains(fmt.Sprint(body["detail"]), "q1") {
			t.Errorf("DELETE domain=%s: the 409 does not name the job: %v", domain, body)
		}
	}
}

type emptyDocuments struct{ Documents }

func (emptyDocuments) ListDocuments(context.Context, store.ListOptions) (store.DocumentPage, error) {
	return store.DocumentPage{}, nil
}
