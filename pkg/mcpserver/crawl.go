package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

// crawlResult is the crawl tool's answer.
type crawlResult struct {
	Job     *apiclient.CrawlStatus `json:"job"`
	Waiting bool                   `json:"still_running,omitempty"`
	Note    string                 `json:"note,omitempty"`
}

func (t *tools) crawl(ctx context.Context, req *mcp.CallToolRequest, in CrawlInput) (*mcp.CallToolResult, any, error) {
	if t.d.Crawler == nil {
		return nil, nil, errNoCrawler
	}
	if strings.TrimSpace(in.URL) == "" {
		return nil, nil, errors.New(`invalid argument "url": give the http(s) page to start from`)
	}
	st, err := t.d.Crawler.Start(ctx, apiclient.CrawlSpec{
		URL: strings.TrimSpace(in.URL), MaxDepth: in.MaxDepth, MaxPages: in.MaxPages, AllowedDomains: in.AllowedDomains,
		Include: in.Include, Exclude: in.Exclude, Tags: in.Tags, RespectRobots: in.RespectRobots,
		UseSitemap: in.UseSitemap, Recrawl: in.Recrawl, Prune: in.Prune,
	})
	if err != nil {
		return nil, nil, toolError("crawl", err)
	}
	if in.Wait != nil && !*in.Wait {
		return render(crawlResult{Job: st, Waiting: !st.Terminal(),
			Note: "the crawl runs in the background: follow it with crawl_status id=" + st.ID}, in.Format)
	}
	wait := time.Duration(in.WaitSeconds) * time.Second
	if wait == 0 {
		wait = 10 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	p := newProgress(ctx, req, st)
	final, err := t.d.Crawler.Events(wctx, st.ID, p.event)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			cur, cerr := t.d.Crawler.Crawl(ctx, st.ID)
			if cerr != nil {
				cur = st
			}
			return render(crawlResult{Job: cur, Waiting: true,
				Note: fmt.Sprintf("still running after %s: follow it with crawl_status id=%s", wait, st.ID)}, in.Format)
		}
		return nil, nil, fmt.Errorf("crawl %s started but following it failed (%w); check it with crawl_status id=%s", st.ID, toolError("crawl", err), st.ID)
	}
	p.send(ctx, final.Counters, true)
	return render(crawlResult{Job: final}, in.Format)
}

// progress turns a crawl's events into MCP progress notifications: progress is
// the pages finished according to the job's counters in its progress and summary
// events; total is the page budget plus failures and skips (which do not use the
// budget).
type progress struct {
	ctx      context.Context
	req      *mcp.CallToolRequest
	token    any
	maxPages int64
	last     float64
	lastAt   time.Time
	counters apiclient.Counters
}

func newProgress(ctx context.Context, req *mcp.CallToolRequest, st *apiclient.CrawlStatus) *progress {
	p := &progress{ctx: ctx, req: req, maxPages: int64(st.Spec.MaxPages), counters: st.Counters}
	if req != nil && req.Params != nil {
		p.token = req.Params.GetProgressToken()
	}
	return p
}

func (p *progress) event(ev apiclient.Event) error {
	// Only the job's own counters (progress and summary events) move the progress:
	// adding page events on top of a snapshot counts a page twice when its event
	// arrives after a snapshot that already includes it, and progress may never go
	// back down to the job's final count.
	if ev.Status != nil && ev.Status.Counters.Processed() >= p.counters.Processed() {
		p.counters = ev.Status.Counters
		p.send(p.ctx, p.counters, false)
	}
	return nil
}

// send notifies the client when progress grew (at most every progressStep unless final).
func (p *progress) send(ctx context.Context, c apiclient.Counters, final bool) {
	if p.token == nil || p.req.Session == nil {
		return
	}
	done := c.Processed()
	if float64(done) <= p.last || (!final && time.Since(p.lastAt) < progressStep) {
		return
	}
	total := p.maxPages + c.Failed + c.SkippedTotal()
	if total < done {
		total = done
	}
	msg := fmt.Sprintf("%d pages done: %d stored, %d unchanged, %d failed, %d skipped",
		done, c.Stored, c.Unchanged, c.Failed, c.SkippedTotal())
	if err := p.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: p.token, Progress: float64(done), Total: float64(total), Message: msg,
	}); err != nil {
		return // the client went away; the crawl goes on
	}
	p.last, p.lastAt = float64(done), time.Now()
}
