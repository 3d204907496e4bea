package engine

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/services/crawler/internal/testsite"
)

// clientTally counts page events as a client does (apiclient.Counters.Add,
// what kgs crawl --wait shows), from their JSON.
func clientTally(t *testing.T, events []Event) apiclient.Counters {
	t.Helper()
	var c apiclient.Counters
	for _, ev := range events {
		var cev apiclient.Event
		b, _ := json.Marshal(ev)
		if err := json.Unmarshal(b, &cev); err != nil {
			t.Fatal(err)
		}
		c.Add(cev)
	}
	return c
}

// budgetCounters is the part of the job's counters page events tell: the
// outcomes, with skips, failures and deletions by reason.
func budgetCounters(t *testing.T, c Counters) apiclient.Counters {
	t.Helper()
	var out apiclient.Counters
	b, _ := json.Marshal(c)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return apiclient.Counters{Stored: out.Stored, Unchanged: out.Unchanged, Deleted: out.Deleted, Empty: out.Empty,
		ScriptRendered: out.ScriptRendered, Failed: out.Failed, FailedBy: nonEmpty(out.FailedBy),
		DeletedBy: nonEmpty(out.DeletedBy), Skipped: nonEmpty(out.Skipped)}
}

func nonEmpty(m map[string]int64) map[string]int64 {
	if len(m) == 0 {
		return nil
	}
	return m
}

// TestPageEventsAgreeWithCounters: every page the job counts has exactly one
// page event, with the outcome it is counted under, and a client that adds up
// the events (apiclient.Counters.Add) gets the job's counters: on a first
// crawl, a recrawl (304s, a changed page, a removed one) and a crawl with new
// tags.
func TestPageEventsAgreeWithCounters(t *testing.T) {
	site := testsite.New(testsite.Options{})
	t.Cleanup(site.Close)
	st := openStore(t, freshDatabase(t))
	spec := Spec{URL: site.SeedURL(), MaxDepth: ptr(2), MaxPages: 1000, UseSitemap: ptr(false), Tags: []string{"a"}}
	check := func(name string, spec Spec) {
		t.Helper()
		s, events := crawlWithEvents(t, st, spec)
		if diff := cmp.Diff(budgetCounters(t, s.Counters), clientTally(t, events)); diff != "" {
			t.Errorf("%s: page events disagree with the job's counters (-counters +events):\n%s", name, diff)
		}
		seen := map[string]int{}
		for _, ev := range events {
			seen[ev.URL]++
			if seen[ev.URL] == 2 {
				t.Errorf("%s: two page events for %s", name, ev.URL)
			}
		}
		t.Logf("%s: %d page events, %d stored, %d unchanged", name, len(events), s.Counters.Stored, s.Counters.Unchanged)
	}
	check("first crawl", spec)
	var changed, removed string
	for _, u := range storedURLs(t, st) {
		if strings.Contains(u, "/articles/") && changed == "" {
			changed = u
		} else if strings.Contains(u, "/articles/") && removed == "" {
			removed = u
		}
	}
	site.Update(mustPath(changed))
	site.Remove(mustPath(removed))
	spec.Recrawl = true
	check("recrawl", spec)
	spec.Tags = []string{"b"}
	check("new tags", spec)

	// Pages scripts render in the browser (empty, script_rendered).
	shells := testsite.NewShellSite()
	t.Cleanup(shells.Close)
	st = openStore(t, freshDatabase(t))
	check("script-rendered site", Spec{URL: shells.SeedURL(), MaxDepth: ptr(1), UseSitemap: ptr(false)})
}
