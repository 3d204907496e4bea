package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

// Report is everything one run measured, as written by -json.
type Report struct {
	Dataset     string                  `json:"dataset"`
	Queries     int                     `json:"queries"`
	Judged      int                     `json:"judged_pages"`
	Search      string                  `json:"search"`
	K           int                     `json:"k"`
	At          time.Time               `json:"at"`
	Corpus      *apiclient.SearchStatus `json:"corpus,omitempty"`
	Tags        []string                `json:"tags,omitempty"`        // every search restricted to these
	PeerCorpus  *PeerCorpus             `json:"peer_corpus,omitempty"` // what the peers ranked
	Methods     []*MethodResult         `json:"methods"`
	Comparisons []Paired                `json:"comparisons"`
	// PeerComparisons pairs each of our methods (ablations included) with each peer.
	PeerComparisons []Paired `json:"peer_comparisons,omitempty"`
	Verdict         string   `json:"verdict"`
	Problems        []string `json:"problems,omitempty"`

	data *Dataset // for -v details; nil for a union
}

// RunReport is every dataset's report of one run and, with several datasets, the
// union of their queries (what -json and -md write).
type RunReport struct {
	Reports []*Report `json:"reports"`
	Union   *Report   `json:"union,omitempty"`
}

// WriteJSON writes the run's reports, per-query results included.
func (rr RunReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rr)
}

// WriteMarkdown writes each dataset's tables, then the union's.
func (rr RunReport) WriteMarkdown(w io.Writer) error {
	all := rr.Reports
	if rr.Union != nil {
		all = append(slices.Clone(all), rr.Union)
	}
	for i, r := range all {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "### %s\n\n", r.Dataset)
		if err := r.WriteMarkdown(w); err != nil {
			return err
		}
	}
	return nil
}

// PeerCorpus is the stored text the peers ranked: the chunks of the documents
// carrying the dataset's tag.
type PeerCorpus struct {
	Tag    string `json:"tag"`
	Pages  int    `json:"pages"`
	Chunks int    `json:"chunks"`
}

// tieEps is the nDCG difference under which two methods tie on a query.
const tieEps = 1e-9

func newReport(d *Dataset, search string, k int, st *apiclient.SearchStatus, results []*MethodResult, at time.Time) *Report {
	r := &Report{Dataset: d.Name, Queries: len(d.Queries), Search: search, K: k, At: at.UTC(), Corpus: st, Methods: results}
	for _, q := range d.Queries {
		r.Judged += len(q.Relevant)
	}
	var full *MethodResult
	for _, m := range results {
		if m.Method == "full" {
			full = m
		}
		if m.Degraded > 0 {
			r.Problems = append(r.Problems, fmt.Sprintf("method %s: %d of %d answers were degraded (%s)", m.Method, m.Degraded, len(m.PerQuery), degradedSignals(m)))
		}
	}
	if full != nil {
		beatsAll := true
		var lost, notBelow []string
		for _, m := range results {
			if m == full {
				continue
			}
			p := Compare(full, m, tieEps)
			r.Comparisons = append(r.Comparisons, p)
			if m.Kind == KindAblation {
				// A part switched off is not a competitor, but one that scores as
				// well without that part is named: the part adds nothing there.
				if !(full.NDCG > m.NDCG) {
					notBelow = append(notBelow, m.Method)
				}
				continue
			}
			if !(full.NDCG > m.NDCG) {
				beatsAll = false
				lost = append(lost, m.Method)
			}
		}
		switch {
		case len(r.Comparisons) == 0:
			r.Verdict = "only the full pipeline was run"
		case beatsAll:
			r.Verdict = "the full pipeline beats every other method on mean nDCG@" + fmt.Sprint(k)
		default:
			r.Verdict = fmt.Sprintf("the full pipeline does NOT beat %s on mean nDCG@%d", strings.Join(lost, ", "), k)
		}
		if len(notBelow) > 0 && len(r.Comparisons) > 0 {
			r.Verdict += fmt.Sprintf("; ablations at or above it: %s", strings.Join(notBelow, ", "))
		}
	}
	if len(r.Problems) > 0 {
		r.Verdict = "INVALID: degraded answers make the comparison meaningless; " + r.Verdict
	}
	r.PeerComparisons = peerComparisons(results)
	return r
}

// peerComparisons pairs every method that is not a peer with every peer.
func peerComparisons(results []*MethodResult) []Paired {
	var out []Paired
	for _, m := range results {
		if m.Kind == KindPeer {
			continue
		}
		for _, p := range results {
			if p.Kind == KindPeer {
				out = append(out, Compare(m, p, tieEps))
			}
		}
	}
	return out
}

func degradedSignals(m *MethodResult) string {
	seen := map[string]bool{}
	var out []string
	for _, q := range m.PerQuery {
		for _, s := range q.Degraded {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// WriteText prints the table of means, the paired comparisons and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "dataset %s: %d queries, %d judged pages; search %s; k=%d\n", r.Dataset, r.Queries, r.Judged, r.Search, r.K)
	if r.Corpus != nil {
		fmt.Fprintf(w, "search index: %d documents, %d chunks (every corpus in the store), index lag %d\n", r.Corpus.Documents, r.Corpus.IndexedChunks, r.Corpus.IndexLag)
	}
	if len(r.Tags) > 0 {
		fmt.Fprintf(w, "searches restricted to tags=%s\n", strings.Join(r.Tags, ","))
	}
	if r.PeerCorpus != nil {
		fmt.Fprintf(w, "peers rank %d stored chunks of %d pages (tag %q)\n", r.PeerCorpus.Chunks, r.PeerCorpus.Pages, r.PeerCorpus.Tag)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\tnDCG@%d\tMRR@%d\tRecall@%d\tmedian ms\tdegraded\tparameters\n", r.K, r.K, r.K)
	for _, m := range r.Methods {
		params := m.Params
		if params == "" {
			params = "(service defaults)"
		}
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.1f\t%d\t%s\n", m.Method, m.NDCG, m.MRR, m.Recall, m.MedianMS, m.Degraded, params)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.PeerComparisons) > 0 {
		fmt.Fprintf(w, "\nagainst the peers: nDCG@%d difference (better/equal/worse queries, sign test p)\n", r.K)
		if err := r.writePeerMatrix(w, false); err != nil {
			return err
		}
	}
	if len(r.Comparisons) > 0 {
		fmt.Fprintln(w)
		for _, p := range r.Comparisons {
			fmt.Fprintf(w, "%s vs %s: nDCG@%d %+.3f; per query %d better, %d equal, %d worse (sign test p=%.2g)\n", p.A, p.B, r.K, p.MeanDiff, p.Wins, p.Ties, p.Losses, p.SignP)
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "problem: %s\n", p)
	}
	if r.Verdict != "" {
		fmt.Fprintf(w, "\nverdict: %s\n", r.Verdict)
	}
	return nil
}

// WriteMarkdown writes the table of means as Markdown, for docs/benchmarks.md.
func (r *Report) WriteMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "Relevance on `%s` (%d queries, %d judged pages, k=%d", r.Dataset, r.Queries, r.Judged, r.K)
	if len(r.Tags) > 0 {
		fmt.Fprintf(w, "; searches restricted to `tags=%s`", strings.Join(r.Tags, ","))
	}
	if r.PeerCorpus != nil {
		fmt.Fprintf(w, "; corpus %d pages, %d chunks", r.PeerCorpus.Pages, r.PeerCorpus.Chunks)
	}
	fmt.Fprintf(w, "; %s):\n\n", r.At.Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "| method | nDCG@%d | MRR@%d | Recall@%d | median latency (ms) | request parameters |\n", r.K, r.K, r.K)
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	for _, m := range r.Methods {
		params := "`" + m.Params + "`"
		if m.Params == "" {
			params = "service defaults"
		}
		if m.Kind == KindPeer {
			params = m.Params
		}
		fmt.Fprintf(w, "| %s | %.3f | %.3f | %.3f | %.1f | %s |\n", m.Method, m.NDCG, m.MRR, m.Recall, m.MedianMS, params)
	}
	if len(r.PeerComparisons) > 0 {
		fmt.Fprintf(w, "\nAgainst the peers, per query: nDCG@%d difference (queries better/equal/worse, two-sided sign test p):\n\n", r.K)
		if err := r.writePeerMatrix(w, true); err != nil {
			return err
		}
	}
	if len(r.Comparisons) > 0 {
		fmt.Fprintln(w)
		for _, p := range r.Comparisons {
			fmt.Fprintf(w, "- %s vs %s: nDCG@%d %+.3f; per query %d better, %d equal, %d worse (sign test p=%.2g)\n", p.A, p.B, r.K, p.MeanDiff, p.Wins, p.Ties, p.Losses, p.SignP)
		}
	}
	for _, p := range r.Problems {
		fmt.Fprintf(w, "- problem: %s\n", p)
	}
	if r.Verdict != "" {
		fmt.Fprintf(w, "\nVerdict: %s.\n", r.Verdict)
	}
	return nil
}

// writePeerMatrix writes one row per method that is not a peer and one column per
// peer: the mean nDCG difference, wins/ties/losses and the sign test's p.
func (r *Report) writePeerMatrix(w io.Writer, md bool) error {
	var peers, rows []string
	cell := map[[2]string]Paired{}
	for _, p := range r.PeerComparisons {
		if !slices.Contains(peers, p.B) {
			peers = append(peers, p.B)
		}
		if !slices.Contains(rows, p.A) {
			rows = append(rows, p.A)
		}
		cell[[2]string{p.A, p.B}] = p
	}
	format := func(p Paired) string {
		return fmt.Sprintf("%+.3f (%d/%d/%d, p=%.2g)", p.MeanDiff, p.Wins, p.Ties, p.Losses, p.SignP)
	}
	if md {
		fmt.Fprintf(w, "| method | vs %s |\n|---|%s\n", strings.Join(peers, " | vs "), strings.Repeat("---:|", len(peers)))
		for _, a := range rows {
			cells := make([]string, len(peers))
			for i, b := range peers {
				cells[i] = format(cell[[2]string{a, b}])
			}
			fmt.Fprintf(w, "| %s | %s |\n", a, strings.Join(cells, " | "))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "method\tvs %s\n", strings.Join(peers, "\tvs "))
	for _, a := range rows {
		cells := make([]string, len(peers))
		for i, b := range peers {
			cells[i] = format(cell[[2]string{a, b}])
		}
		fmt.Fprintf(tw, "%s\t%s\n", a, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// Union pools the reports' queries into one report (query ids prefixed with the
// dataset's name), for the means and sign tests over every dev set together. Only
// methods present in every report are kept.
func Union(reports []*Report) *Report {
	if len(reports) == 0 {
		return nil
	}
	var names []string
	for _, r := range reports {
		names = append(names, r.Dataset)
	}
	d := &Dataset{Name: "union of " + strings.Join(names, ", ")}
	var methods []*MethodResult
	for _, m0 := range reports[0].Methods {
		merged := &MethodResult{Method: m0.Method, Kind: m0.Kind, Params: m0.Params, byQueryID: map[string]*QueryResult{}}
		inAll := true
		for _, r := range reports {
			i := slices.IndexFunc(r.Methods, func(m *MethodResult) bool { return m.Method == m0.Method })
			if i < 0 {
				inAll = false
				break
			}
			for _, q := range r.Methods[i].PerQuery {
				q.ID = r.Dataset + "/" + q.ID
				merged.PerQuery = append(merged.PerQuery, q)
			}
		}
		if inAll {
			merged.summarise()
			methods = append(methods, merged)
		}
	}
	u := newReport(d, reports[0].Search, reports[0].K, nil, methods, reports[len(reports)-1].At)
	for _, r := range reports {
		u.Queries += r.Queries
		u.Judged += r.Judged
	}
	return u
}

// WriteJSON writes the whole report, per-query results included.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteDetails prints, per query, each method's scores and top hits (grade in
// brackets, * for a page judged relevant), then the judged pages no method found.
func (r *Report) WriteDetails(w io.Writer, d *Dataset, top int) {
	for _, q := range d.Queries {
		fmt.Fprintf(w, "\n%s %q [%s, %s]\n", q.ID, q.Query, q.Style, q.Area)
		found := map[string]bool{}
		for _, m := range r.Methods {
			qr, ok := m.byQueryID[q.ID]
			if !ok {
				continue
			}
			fmt.Fprintf(w, "  %-8s nDCG %.3f  MRR %.3f  R %.2f ", m.Method, qr.NDCG, qr.MRR, qr.Recall)
			if len(qr.Degraded) > 0 {
				fmt.Fprintf(w, " DEGRADED %v", qr.Degraded)
			}
			fmt.Fprintln(w)
			for i, h := range qr.Hits {
				if h.Grade > 0 {
					found[h.Page] = true
				}
				if i >= top {
					continue
				}
				mark := " "
				if h.Grade > 0 {
					mark = "*"
				}
				fmt.Fprintf(w, "    %2d %s[%d] %-45s %.3f %s\n", i+1, mark, h.Grade, h.Page, h.Score, breakdown(h.Breakdown))
			}
		}
		var missed []string
		for page, g := range q.Relevant {
			if !found[page] {
				missed = append(missed, fmt.Sprintf("%s[%d]", page, g))
			}
		}
		slices.Sort(missed)
		if len(missed) > 0 {
			fmt.Fprintf(w, "  not in any top %d: %s\n", r.K, strings.Join(missed, " "))
		}
	}
}

func breakdown(b map[string]float64) string {
	if len(b) == 0 {
		return ""
	}
	var parts []string
	for _, s := range []string{"vector", "graph", "bm25", "recency", "title"} {
		if v, ok := b[s]; ok {
			parts = append(parts, fmt.Sprintf("%s=%.2f", s[:1], v))
		}
	}
	return strings.Join(parts, " ")
}

// WriteLosses lists, for each other method, the queries where the full pipeline
// scores a lower nDCG, worst first, with the top hits of both: where to look when
// the full pipeline loses.
func (r *Report) WriteLosses(w io.Writer, d *Dataset, top int) {
	var full *MethodResult
	for _, m := range r.Methods {
		if m.Method == "full" {
			full = m
		}
	}
	if full == nil {
		return
	}
	text := map[string]string{}
	for _, q := range d.Queries {
		text[q.ID] = q.Query
	}
	for _, m := range r.Methods {
		if m == full {
			continue
		}
		type loss struct {
			id   string
			diff float64
		}
		var ls []loss
		for _, qf := range full.PerQuery {
			if qm, ok := m.byQueryID[qf.ID]; ok && qm.NDCG-qf.NDCG > tieEps {
				ls = append(ls, loss{qf.ID, qm.NDCG - qf.NDCG})
			}
		}
		slices.SortFunc(ls, func(a, b loss) int {
			if a.diff != b.diff {
				if a.diff > b.diff {
					return -1
				}
				return 1
			}
			return strings.Compare(a.id, b.id)
		})
		fmt.Fprintf(w, "\nfull loses to %s on %d queries:\n", m.Method, len(ls))
		for _, l := range ls {
			qf, qm := full.byQueryID[l.id], m.byQueryID[l.id]
			fmt.Fprintf(w, "  %s %q: nDCG %.3f vs %.3f (%+.3f)\n", l.id, text[l.id], qf.NDCG, qm.NDCG, -l.diff)
			fmt.Fprintf(w, "    full:   %s\n", hitList(qf.Hits, top))
			fmt.Fprintf(w, "    %-7s %s\n", m.Method+":", hitList(qm.Hits, top))
		}
	}
}

func hitList(hits []Hit, top int) string {
	var parts []string
	for i, h := range hits {
		if i >= top {
			break
		}
		parts = append(parts, fmt.Sprintf("%s[%d]", strings.TrimSuffix(h.Page, ".html"), h.Grade))
	}
	return strings.Join(parts, " ")
}
