package kgscli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

type crawlFlags struct {
	maxPages  int
	depth     int
	include   []string
	exclude   []string
	tags      []string
	domains   []string
	noRobots  bool
	noSitemap bool
	recrawl   bool
	prune     bool
	wait      bool
	progress  string
	format    string
}

func newCrawlCmd(o *options) *cobra.Command {
	var f crawlFlags
	cmd := &cobra.Command{
		Use:   "crawl URL",
		Short: "Start a crawl job; with --wait follow it with a live progress bar",
		Example: `  kgs crawl https://docs.python.org/3/library/ --max-pages 50 --depth 2 --tags python --wait
  kgs crawl http://127.0.0.1:8099/index.html --include '/library/' --exclude '/whatsnew/' --wait --format json`,
		Args: args(1, "the start URL"),
		RunE: func(cmd *cobra.Command, a []string) error {
			spec, err := f.spec(a[0])
			if err != nil {
				return err
			}
			if err := checkChoice("--progress", f.progress, "auto", "bar", "plain", "none"); err != nil {
				return err
			}
			if err := checkChoice("--format", f.format, "text", "json"); err != nil {
				return err
			}
			st, err := o.crawler().Start(cmd.Context(), spec)
			if err != nil {
				return identicalCrawl(err)
			}
			if !f.wait {
				return printJob(o.io.Out, st, f.format, fmt.Sprintf("crawl %s %s: follow it with: kgs job %s --wait", st.ID, st.Status, st.ID))
			}
			return follow(cmd.Context(), o, st, f.progress, f.format)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&f.maxPages, "max-pages", 0, "most pages to process: stored, unchanged, empty or deleted; failures and skips do not count (0: the crawler's default, 100)")
	fl.IntVar(&f.depth, "depth", -1, "link distance from the start page (-1: the crawler's default, 2)")
	fl.StringArrayVar(&f.include, "include", nil, "only crawl URLs matching this `regexp` (repeatable)")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "do not crawl URLs matching this `regexp` (repeatable)")
	fl.StringSliceVar(&f.tags, "tags", nil, "tags of every page the crawl processes (comma-separated); they replace a page's stored tags, also when it is unchanged")
	fl.StringSliceVar(&f.domains, "domains", nil, "hosts in scope (default the start URL's host)")
	fl.BoolVar(&f.noRobots, "no-robots", false, "ignore robots.txt")
	fl.BoolVar(&f.noSitemap, "no-sitemap", false, "do not seed from the sitemap")
	fl.BoolVar(&f.recrawl, "recrawl", false, "conditional requests for known pages")
	fl.BoolVar(&f.prune, "prune", false, "when the crawl saw its whole scope, remove the stored pages in that scope it did not reach (vanished from the site); a crawl cut short removes nothing and says why in its warnings")
	fl.BoolVar(&f.wait, "wait", false, "follow the job until it ends (progress from its server-sent events)")
	fl.StringVar(&f.progress, "progress", "auto", "progress display with --wait: auto (a bar on a terminal, plain lines otherwise), bar, plain, none")
	fl.StringVar(&f.format, "format", "text", "output: text or json (the job status; progress then goes to stderr)")
	return cmd
}

func (f crawlFlags) spec(u string) (apiclient.CrawlSpec, error) {
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return apiclient.CrawlSpec{}, usagef("crawl: %q is not an http(s) URL", u)
	}
	if f.maxPages < 0 {
		return apiclient.CrawlSpec{}, usagef("--max-pages: must be 0 (default) or more, got %d", f.maxPages)
	}
	if f.depth < -1 {
		return apiclient.CrawlSpec{}, usagef("--depth: must be -1 (default) or more, got %d", f.depth)
	}
	for _, re := range append(append([]string{}, f.include...), f.exclude...) {
		if _, err := regexp.Compile(re); err != nil {
			return apiclient.CrawlSpec{}, usagef("--include/--exclude: %q is not a regular expression: %v", re, err)
		}
	}
	spec := apiclient.CrawlSpec{URL: u, MaxPages: f.maxPages, Include: f.include, Exclude: f.exclude, Tags: f.tags,
		AllowedDomains: f.domains, Recrawl: f.recrawl, Prune: f.prune}
	if f.depth >= 0 {
		spec.MaxDepth = &f.depth
	}
	if f.noRobots {
		spec.RespectRobots = new(false)
	}
	if f.noSitemap {
		spec.UseSitemap = new(false)
	}
	return spec, nil
}

// identicalCrawl adds to the crawler's 409 (an identical crawl is queued or
// running) the commands that follow or cancel that job.
func identicalCrawl(err error) error {
	var ae *apiclient.Error
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict || !strings.HasPrefix(ae.Location, "/api/v1/crawls/") {
		return err
	}
	id := strings.TrimPrefix(ae.Location, "/api/v1/crawls/")
	return fmt.Errorf("%w\nfollow it: kgs job %s --wait; or cancel it (kgs job %s --cancel) and start the crawl again", err, id, id)
}

func checkChoice(flag, v string, choices ...string) error {
	for _, c := range choices {
		if v == c {
			return nil
		}
	}
	return usagef("%s: want one of %s, got %q", flag, strings.Join(choices, ", "), v)
}

func newJobCmd(o *options) *cobra.Command {
	var wait, cancel bool
	var progress, format string
	cmd := &cobra.Command{
		Use:   "job ID",
		Short: "Show a crawl job's status; with --wait follow it to the end, with --cancel stop it",
		Args:  args(1, "a crawl job id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := checkChoice("--progress", progress, "auto", "bar", "plain", "none"); err != nil {
				return err
			}
			if err := checkChoice("--format", format, "text", "json"); err != nil {
				return err
			}
			if wait && cancel {
				return usagef("%s: give --wait or --cancel, not both", cmd.CommandPath())
			}
			get := o.crawler().Crawl
			if cancel {
				get = o.crawler().Cancel
			}
			st, err := get(cmd.Context(), a[0])
			if err != nil {
				return err
			}
			if !wait || st.Terminal() {
				return printJob(o.io.Out, st, format, summaryText(st))
			}
			return follow(cmd.Context(), o, st, progress, format)
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "follow the job until it ends")
	cmd.Flags().BoolVar(&cancel, "cancel", false, "cancel the job: pages already stored stay stored (a job that has ended is left as it is)")
	cmd.Flags().StringVar(&progress, "progress", "auto", "progress display with --wait: auto, bar, plain, none")
	cmd.Flags().StringVar(&format, "format", "text", "output: text or json")
	return cmd
}

func printJob(w io.Writer, st *apiclient.CrawlStatus, format, line string) error {
	if format == "json" {
		return json.NewEncoder(w).Encode(st)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// follow shows a job's progress from its event stream and prints its summary.
// A job that ends failed or cancelled exits 1.
func follow(ctx context.Context, o *options, st *apiclient.CrawlStatus, mode, format string) error {
	out := o.io.Out
	if format == "json" {
		out = o.io.Err
	}
	if mode == "auto" {
		mode = "plain"
		if o.io.IsTerminal && format != "json" {
			mode = "bar"
		}
	}
	v := &progressView{w: out, mode: mode, start: time.Now(), maxPages: int64(st.Spec.MaxPages), c: st.Counters, st: st.Counters}
	final, err := o.crawler().Events(ctx, st.ID, func(ev apiclient.Event) error {
		v.event(ev)
		return nil
	})
	if err != nil {
		v.end()
		if errors.Is(err, context.Canceled) {
			return &exitError{code: ExitError, msg: fmt.Sprintf("stopped following crawl %s; it goes on: kgs job %s --wait follows it again, kgs job %s --cancel stops it", st.ID, st.ID, st.ID)}
		}
		return err
	}
	v.c = final.Counters
	v.draw(true)
	v.end()
	if err := printJob(o.io.Out, final, format, summaryText(final)); err != nil {
		return err
	}
	if final.Status != "done" {
		return &exitError{code: ExitError, msg: fmt.Sprintf("crawl %s ended %s: %s", final.ID, final.Status, strings.Join(final.LastErrors, "; "))}
	}
	return nil
}

// summaryText is the job's summary line followed by a line per warning.
func summaryText(st *apiclient.CrawlStatus) string {
	var b strings.Builder
	b.WriteString(summaryLine(st))
	for _, w := range st.Warnings {
		b.WriteString("\nwarning: " + w)
	}
	return b.String()
}

// summaryLine is a job in one line, with the reasons of deletions, failures
// and skips and the empty pages that JavaScript renders in the browser.
func summaryLine(st *apiclient.CrawlStatus) string {
	c := st.Counters
	took := time.Duration(st.RunningMS) * time.Millisecond
	empty := ""
	if c.ScriptRendered > 0 {
		empty = fmt.Sprintf(" (%d rendered by JavaScript)", c.ScriptRendered)
	}
	return fmt.Sprintf("crawl %s %s in %s: %d stored, %d unchanged, %d deleted%s, %d empty%s, %d failed%s, %d skipped%s, %d chunks",
		st.ID, st.Status, took.Round(time.Millisecond), c.Stored, c.Unchanged, c.Deleted, reasons(c.DeletedBy), c.Empty, empty,
		c.Failed, reasons(c.FailedBy), c.SkippedTotal(), reasons(c.Skipped), c.Chunks)
}

func reasons(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %d", k, m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// progressView draws a crawl's progress: a bar redrawn in place on a terminal,
// or a plain line per change (at most one a second) otherwise.
type progressView struct {
	w        io.Writer
	mode     string // bar, plain, none
	start    time.Time
	maxPages int64
	c        apiclient.Counters // what the line shows: ev or st, never a mix
	// ev counts the page events alone; st is the job's counters of the
	// latest status. A page finished just before a status was read can have
	// its event arrive after it: adding events on top of a status would
	// count it twice (and a page finished just before the stream began has
	// no event). The line shows whichever has seen more pages.
	ev, st   apiclient.Counters
	lastLine string
	lastAt   time.Time
	drawn    bool
}

func (v *progressView) event(ev apiclient.Event) {
	switch {
	case ev.Type == "page":
		v.ev.Add(ev)
	case ev.Status != nil:
		v.st = ev.Status.Counters
	}
	if v.st.Processed() >= v.ev.Processed() {
		v.c = v.st
	} else {
		v.c = v.ev
		v.c.Chunks = v.st.Chunks // page events do not sum chunks
	}
	v.draw(false)
}

// line is the progress in words: pages, chunks, failures, rate and ETA.
func (v *progressView) line(final bool) string {
	c := v.c
	secs := time.Since(v.start).Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(c.Processed()) / secs
	}
	eta := "?"
	if final {
		eta = "0s"
	} else if budgetRate := float64(c.Budget()) / secs; budgetRate > 0 && v.maxPages > 0 {
		// An upper bound: max_pages may not be reached. Under a second it is
		// "<1s" (rounded, it read "<=0s"), and with the page budget used up the
		// job is only finishing its last pages.
		left := float64(v.maxPages - c.Budget())
		switch d := time.Duration(left / budgetRate * float64(time.Second)); {
		case left <= 0:
			eta = "finishing"
		case d < time.Second:
			eta = "<1s"
		default:
			eta = "<=" + d.Round(time.Second).String()
		}
	}
	return fmt.Sprintf("%d pages: %d stored, %d unchanged, %d failed, %d skipped; %d chunks; %.1f pages/s; ETA %s",
		c.Processed(), c.Stored, c.Unchanged, c.Failed, c.SkippedTotal(), c.Chunks, rate, eta)
}

func (v *progressView) draw(final bool) {
	if v.mode == "none" {
		return
	}
	line := v.line(final)
	if v.mode == "plain" {
		// Only the counts decide whether a line is new; rate and ETA always move.
		key := fmt.Sprint(v.c.Processed(), v.c.Stored, v.c.Failed, v.c.Chunks)
		if key == v.lastLine || (!final && time.Since(v.lastAt) < time.Second) {
			return
		}
		v.lastLine, v.lastAt = key, time.Now()
		fmt.Fprintln(v.w, "progress: "+line)
		return
	}
	if !final && time.Since(v.lastAt) < 100*time.Millisecond {
		return
	}
	v.lastAt = time.Now()
	const width = 24
	fill := 0
	if v.maxPages > 0 {
		fill = int(min(width, width*v.c.Budget()/v.maxPages))
	}
	if final {
		fill = width
	}
	bar := strings.Repeat("=", fill) + strings.Repeat(" ", width-fill)
	fmt.Fprintf(v.w, "\r\x1b[K[%s] %d/%d %s", bar, v.c.Budget(), v.maxPages, line)
	v.drawn = true
}

// end finishes the bar's line.
func (v *progressView) end() {
	if v.mode == "bar" && v.drawn {
		fmt.Fprintln(v.w)
		v.drawn = false
	}
}
