package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// Frontier reasons of done URLs.
const (
	DoneStored    = "stored"
	DoneUnchanged = "unchanged"
	// DoneDeleted is the outcome of a page whose stored version was
	// removed because of what the page answers now; its frontier reason is
	// deletedReason(why), why being http_404, http_410, noindex, empty,
	// script_rendered, content_type, redirect or redirect_out_of_scope.
	DoneDeleted = "deleted"
	DoneEmpty   = "empty"
	DoneNoIndex = "noindex"
	// DoneScriptRendered is a page without text because scripts render it
	// in the browser: its HTML is an empty app shell (htmltext.DetectShell).
	DoneScriptRendered = "script_rendered"
)

// Frontier reasons of skipped URLs (besides fetch.Reason*).
const (
	SkipRedirect           = "redirect" // the target was queued instead
	SkipRedirectOutOfScope = "redirect_out_of_scope"
	SkipBlocked            = "blocked"
	SkipSSRF               = "ssrf"
)

// Frontier reasons of failed URLs (besides "http_<status>").
const (
	FailTimeout = "timeout"
	FailNetwork = "network"
	FailExtract = "extract"
	FailEmbed   = "embed"
	FailStore   = "store"
)

// deletedReason is the frontier reason of a page whose stored version was
// removed for why: "deleted_noindex".
func deletedReason(why string) string { return DoneDeleted + "_" + why }

// deletedWhy tells whether a done frontier reason is a removal, and why. A
// bare "deleted" (written for 404 and 410 before removals had reasons) has
// no why.
func deletedWhy(reason string) (string, bool) {
	if reason == DoneDeleted {
		return "", true
	}
	why, ok := strings.CutPrefix(reason, DoneDeleted+"_")
	return why, ok && why != ""
}

// progress is the part of a job's counters that the frontier cannot tell:
// saved in crawl_jobs.counters by the heartbeat, restored on resume.
type progress struct {
	Seeded      bool             `json:"seeded"`
	Owner       string           `json:"owner,omitempty"` // the owner that ran the job last
	Filtered    map[string]int64 `json:"filtered"`
	Bytes       int64            `json:"bytes"`
	Chunks      int64            `json:"chunks"`
	SitemapURLs int64            `json:"sitemap_urls"`
	Stages      StageTimes       `json:"stage_ms"`
	ActiveMS    int64            `json:"active_ms"` // time spent running, across resumes
	// ScriptShell is what showed the job's first script_rendered page to be
	// a shell (`an empty <div id="app">`), for the status's warning.
	ScriptShell string `json:"script_shell,omitempty"`
	// What a prune job (Spec.Prune, prune.go) keeps to decide whether it saw
	// its whole scope: in-scope links it did not follow (max_depth, nofollow)
	// whose URLs were not in the frontier when seen, those that did not fit
	// in the list, and why the sitemaps may have left URLs out.
	Unfollowed        []unfollowedLink `json:"unfollowed,omitempty"`
	UnfollowedMore    int64            `json:"unfollowed_more,omitempty"`
	SitemapIncomplete string           `json:"sitemap_incomplete,omitempty"`
	// PruneNote says why a prune job removed nothing, or stopped removing:
	// a warning of the status.
	PruneNote string `json:"prune_note,omitempty"`
}

// StageTimes are summed per-page milliseconds in each stage.
type StageTimes struct {
	Fetch   float64 `json:"fetch"`
	Extract float64 `json:"extract"`
	Chunk   float64 `json:"chunk"`
	Embed   float64 `json:"embed"`
	Store   float64 `json:"store"`
}

// Counters of a job. Fetched, Stored, Unchanged, Deleted, Empty,
// ScriptRendered, Failed and Skipped are exact (from the frontier table);
// Filtered, Bytes and Chunks are saved by the job's owner every few seconds.
// Empty counts the pages that ended without text to store (empty, noindex
// and script_rendered); ScriptRendered is the part of them that scripts
// render in the browser. Deleted counts the pages whose stored version was
// removed, DeletedBy the same by why (http_404, http_410, noindex, empty,
// script_rendered, content_type, redirect, redirect_out_of_scope, and
// vanished for the documents a prune job removed because the crawl did not
// reach them): a page that had a stored version is counted in Deleted, not in
// Empty. Vanished documents are not counted in Discovered or Fetched.
type Counters struct {
	Discovered int64 `json:"discovered"`
	Queued     int64 `json:"queued"`
	InFlight   int64 `json:"in_flight"`
	Fetched    int64 `json:"fetched"`
	Stored     int64 `json:"stored"`
	Unchanged  int64 `json:"unchanged"`
	Deleted    int64 `json:"deleted"`
	// DeletedBy says why the stored versions were removed.
	DeletedBy map[string]int64 `json:"deleted_by_reason"`
	Empty     int64            `json:"empty"`
	// ScriptRendered pages are empty shells filled by JavaScript; counted
	// in Empty too.
	ScriptRendered int64            `json:"script_rendered"`
	Failed         int64            `json:"failed"`
	FailedBy       map[string]int64 `json:"failed_by_reason"`
	Skipped        map[string]int64 `json:"skipped"`
	Filtered       map[string]int64 `json:"filtered_links"`
	Chunks         int64            `json:"chunks"`
	Bytes          int64            `json:"bytes"`
	Sitemap        int64            `json:"sitemap_urls"`
}

// Rates are per second of the job's running time.
type Rates struct {
	PagesPerSec  float64 `json:"pages_per_sec"`  // fetched
	StoredPerSec float64 `json:"stored_per_sec"` // stored
	ChunksPerSec float64 `json:"chunks_per_sec"`
}

// JobStalled is the status shown for a running job that no crawler is
// working on: its owner stopped renewing the lease (the process died or lost
// MariaDB) and no other crawler has taken the job over yet. It is not stored:
// the job is still running in MariaDB and resumes when a crawler claims it.
const JobStalled store.JobStatus = "stalled"

// Stall says why a job is stalled.
type Stall struct {
	Reason string    `json:"reason"` // StallNoCrawler
	Detail string    `json:"detail"`
	Since  time.Time `json:"since"`
}

// Status is a job as GET /api/v1/crawls/{id} shows it.
type Status struct {
	ID         string          `json:"id"`
	Status     store.JobStatus `json:"status"`
	Stall      *Stall          `json:"stall,omitempty"` // set when Status is stalled
	URL        string          `json:"url"`
	Spec       Spec            `json:"spec"`
	Counters   Counters        `json:"counters"`
	Stages     StageTimes      `json:"stage_ms"`
	Rates      Rates           `json:"rates"`
	CreatedAt  time.Time       `json:"created_at"`
	StartedAt  *time.Time      `json:"started_at,omitempty"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
	RunningMS  int64           `json:"running_ms"`
	LastErrors []string        `json:"last_errors"`
	// Warnings say what the user should know about the crawl's result,
	// such as a site whose pages scripts render in the browser.
	Warnings []string `json:"warnings"`
}

// fetchedReasons are the skip and failure reasons of pages that got an HTTP answer.
func fetchedReason(state store.FrontierState, reason string) bool {
	switch state {
	case store.FrontierDone:
		return true
	case store.FrontierSkipped:
		return reason == "content_type" || reason == "too_large" || reason == SkipRedirect || reason == SkipRedirectOutOfScope
	case store.FrontierFailed:
		return strings.HasPrefix(reason, "http_") || reason == FailExtract || reason == FailEmbed || reason == FailStore
	}
	return false
}

// buildStatus combines the job row, its saved progress and the frontier
// counts, as of now.
func buildStatus(job store.Job, prog progress, fr map[store.FrontierState]map[string]int64, now time.Time) (Status, error) {
	spec, err := decodeSpec(job.Spec)
	if err != nil {
		return Status{}, err
	}
	st := Status{
		ID: job.ID, Status: job.Status, URL: spec.URL, Spec: spec, Stages: prog.Stages,
		CreatedAt: job.CreatedAt, LastErrors: job.LastErrors, RunningMS: prog.ActiveMS,
	}
	if st.LastErrors == nil {
		st.LastErrors = []string{}
	}
	if job.Status == store.JobRunning && !job.LeaseUntil.IsZero() && now.After(job.LeaseUntil) {
		st.Status = JobStalled
		st.Stall = &Stall{Reason: StallNoCrawler, Since: job.LeaseUntil,
			Detail: fmt.Sprintf("crawler %q stopped renewing the job's lease at %s and no crawler has taken the job over; it resumes where it stopped when a crawler process claims it",
				job.Owner, job.LeaseUntil.UTC().Format(time.RFC3339))}
	}
	if !job.StartedAt.IsZero() {
		t := job.StartedAt
		st.StartedAt = &t
	}
	if !job.FinishedAt.IsZero() {
		t := job.FinishedAt
		st.FinishedAt = &t
	}
	c := Counters{
		FailedBy: map[string]int64{}, DeletedBy: map[string]int64{}, Skipped: map[string]int64{}, Filtered: map[string]int64{},
		Chunks: prog.Chunks, Bytes: prog.Bytes, Sitemap: prog.SitemapURLs,
	}
	for k, v := range prog.Filtered {
		c.Filtered[k] = v
	}
	for state, reasons := range fr {
		for reason, n := range reasons {
			if state == store.FrontierDone && reason == deletedReason(DeleteVanished) {
				// Removed by prune: not discovered or fetched by the crawl.
				c.Deleted += n
				c.DeletedBy[DeleteVanished] += n
				continue
			}
			c.Discovered += n
			if fetchedReason(state, reason) {
				c.Fetched += n
			}
			switch state {
			case store.FrontierQueued:
				c.Queued += n
			case store.FrontierClaimed:
				c.InFlight += n
			case store.FrontierDone:
				if why, ok := deletedWhy(reason); ok {
					c.Deleted += n
					if why != "" {
						c.DeletedBy[why] += n
					}
					continue
				}
				switch reason {
				case DoneUnchanged:
					c.Unchanged += n
				case DoneEmpty, DoneNoIndex:
					c.Empty += n
				case DoneScriptRendered:
					c.Empty += n
					c.ScriptRendered += n
				default:
					c.Stored += n
				}
			case store.FrontierFailed:
				c.Failed += n
				c.FailedBy[reason] += n
			case store.FrontierSkipped:
				c.Skipped[reason] += n
			}
		}
	}
	st.Counters = c
	st.Warnings = warnings(c, prog)
	if secs := float64(prog.ActiveMS) / 1000; secs > 0 {
		st.Rates = Rates{
			PagesPerSec:  round2(float64(c.Fetched) / secs),
			StoredPerSec: round2(float64(c.Stored) / secs),
			ChunksPerSec: round2(float64(c.Chunks) / secs),
		}
	}
	return st, nil
}

// warnings are the status's warnings: a crawl most of whose pages are
// rendered by scripts in the browser (more than half of the pages that
// ended done, the shells whose stored version was removed included) has
// next to nothing searchable, and the user should crawl something else.
func warnings(c Counters, prog progress) []string {
	out := []string{}
	done := c.Stored + c.Unchanged + c.Empty + c.Deleted - c.DeletedBy[DeleteVanished]
	shells := c.ScriptRendered + c.DeletedBy[DoneScriptRendered]
	if shells > 0 && 2*shells > done {
		what := "pages are"
		if done == 1 {
			what = "page is"
		}
		evidence := ""
		if prog.ScriptShell != "" {
			evidence = " (" + prog.ScriptShell + ")"
		}
		out = append(out, fmt.Sprintf("%d of %d %s rendered by JavaScript in the browser%s; the crawler reads the HTML the server sends and found no text. "+
			"Crawl the site's pre-rendered or static export, or its sources, instead.", shells, done, what, evidence))
	}
	if prog.PruneNote != "" {
		out = append(out, prog.PruneNote)
	}
	return out
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

func loadProgress(raw json.RawMessage) progress {
	var p progress
	_ = json.Unmarshal(raw, &p) // a job not started yet has "{}"
	if p.Filtered == nil {
		p.Filtered = map[string]int64{}
	}
	return p
}

// Status returns a job's status with exact counters.
func (e *Engine) Status(ctx context.Context, id string) (Status, error) {
	job, err := e.st.GetJob(ctx, id)
	if err != nil {
		return Status{}, err
	}
	fr, err := e.st.FrontierReasons(ctx, id)
	if err != nil {
		return Status{}, err
	}
	return buildStatus(job, loadProgress(job.Counters), fr, time.Now())
}
