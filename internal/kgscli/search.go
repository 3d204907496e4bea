package kgscli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
)

func newSearchCmd(o *options) *cobra.Command {
	var req apiclient.SearchRequest
	var format string
	var mmr float64
	var noExpand, keepHistory, keepGenerated bool
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search; a table with score breakdowns by default, or the service's TOON or JSON",
		Example: `  kgs search "postgres streaming replication" --k 5
  kgs search "asyncio event loop" --tags python --weights vector:0.5,bm25:0.5 --fusion rrf --explain
  kgs search "venv" --format json | jq '.results[0].url'`,
		Args: args(1, "the query (quote it)"),
		RunE: func(cmd *cobra.Command, a []string) error {
			req.Q = a[0]
			if strings.TrimSpace(req.Q) == "" {
				return usagef("search: the query is empty")
			}
			if err := checkChoice("--format", format, "table", "toon", "json"); err != nil {
				return err
			}
			// 0 is the flag's unset value (the service's default, 10), not a
			// number of results: --k 0 given on the command line is refused.
			if req.K < 0 || req.K > 100 || (req.K == 0 && cmd.Flags().Changed("k")) {
				return usagef("--k: want 1..100, got %d", req.K)
			}
			if cmd.Flags().Changed("mmr") {
				if mmr < 0 || mmr > 1 {
					return usagef("--mmr: want a lambda in [0,1], got %g", mmr)
				}
				req.MMR = &mmr
			}
			if noExpand {
				req.Expand = new(false)
			}
			if keepHistory {
				req.History = "keep"
			}
			if keepGenerated {
				req.Generated = "keep"
			}
			if format == "table" {
				ans, err := o.search().SearchJSON(cmd.Context(), req)
				if err != nil {
					return err
				}
				return printTable(o.io.Out, ans)
			}
			req.Format = format
			body, _, err := o.search().Search(cmd.Context(), req)
			if err != nil {
				return err
			}
			_, err = o.io.Out.Write(append(body, '\n'))
			return err
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&req.K, "k", 0, "number of results, 1..100 (default 10)")
	fl.IntVar(&req.Offset, "offset", 0, "results to skip (paging)")
	fl.StringSliceVar(&req.Tags, "tags", nil, "only documents with every one of these tags")
	fl.StringVar(&req.Domain, "domain", "", "only documents of this host name (no port: 127.0.0.1, docs.python.org)")
	fl.StringVar(&req.PublishedAfter, "after", "", "published at or after (RFC 3339 or YYYY-MM-DD)")
	fl.StringVar(&req.PublishedBefore, "before", "", "published before (RFC 3339 or YYYY-MM-DD)")
	fl.StringVar(&req.Weights, "weights", "", "signal weights, e.g. vector:0.5,bm25:0.5 (vector, graph, bm25, recency, title; a signal left out weighs 0)")
	fl.StringVar(&req.Fusion, "fusion", "", "weighted (default) or rrf")
	fl.Float64Var(&mmr, "mmr", 0, "MMR diversity lambda in [0,1] (off unless given)")
	fl.BoolVar(&noExpand, "no-expand", false, "no entity expansion through the graph")
	fl.BoolVar(&keepHistory, "keep-history", false, "keep release notes, changelogs and what's-new pages at their full score (history=keep); by default they rank at 0.7 unless the query asks about versions")
	fl.BoolVar(&keepGenerated, "keep-generated", false, "keep source listings and generated indexes (Sphinx _modules/, genindex, module indexes) at their full score (generated=keep); by default they rank at 0.7, listings unless the query asks for source code")
	fl.BoolVar(&req.Explain, "explain", false, "show weights, fusion and each retriever's hits and time")
	fl.StringVar(&format, "format", "table", "output: table, toon (the service's answer) or json")
	return cmd
}

// printTable writes results with their score breakdowns, then the query's
// entities, suggestions and, with --explain, how the scores were made.
func printTable(w io.Writer, a *apiclient.SearchResponse) error {
	var ents []string
	for _, e := range a.Query.Entities {
		ents = append(ents, e.Text+" ("+e.Type+")")
	}
	fmt.Fprintf(w, "%d results in %.1f ms for %q", a.ResultCount, a.TotalTimeMS, a.Query.Normalized)
	if len(ents) > 0 {
		fmt.Fprintf(w, "; entities: %s", strings.Join(ents, ", "))
	}
	fmt.Fprintln(w)
	if len(a.Degraded) > 0 {
		fmt.Fprintf(w, "degraded (signals missing): %s\n", strings.Join(a.Degraded, ", "))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSCORE\tVECTOR\tGRAPH\tBM25\tRECENCY\tTITLE\tFOUND BY\tRESULT")
	for _, r := range a.Results {
		b := r.ScoreBreakdown
		fmt.Fprintf(tw, "%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%s\t%s\n", r.Rank, r.Score, b.Vector, b.Graph, b.BM25,
			b.Recency, b.Title, r.Source, clip(r.Title, 60))
		fmt.Fprintf(tw, "\t\t\t\t\t\t\t\t%s  [chunk %s, bytes %d-%d]\n", r.URL, r.ChunkID, r.Start, r.End)
		fmt.Fprintf(tw, "\t\t\t\t\t\t\t\t%s\n", clip(r.Preview, 100))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(a.SuggestedQueries) > 0 {
		fmt.Fprintf(w, "try also: %s\n", strings.Join(a.SuggestedQueries, " | "))
	}
	if x := a.Explain; x != nil {
		fmt.Fprintf(w, "explain: weights %s, fusion %s, mmr %v, %d candidates ranked (the retrievers' hits together, after filters)\n", x.Weights, x.Fusion, x.MMR, x.Candidates)
		names := make([]string, 0, len(x.Retrievers))
		for n := range x.Retrievers {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r := x.Retrievers[n]
			line := fmt.Sprintf("  %-10s %4d hits  %7.1f ms", n, r.Hits, r.TookMS)
			if r.Error != "" {
				line += "  error: " + r.Error
			}
			fmt.Fprintln(w, line)
		}
		for _, n := range x.Notes {
			fmt.Fprintf(w, "  note: %s\n", n)
		}
	}
	return nil
}

// clip shortens s to n runes, on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
