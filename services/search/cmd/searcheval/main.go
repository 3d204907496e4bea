// Command searcheval prints nDCG@10, MRR@10 and Recall@10 of a running search service
// for a judged query set, for the full pipeline and, in the same run, for BM25 only,
// vector only and RRF of the two (see services/search/internal/eval).
//
//	go run ./services/search/cmd/searcheval -url http://127.0.0.1:8080 \
//	    -queries services/search/testdata/eval/pydocs.json [-v]
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"strings"

	"github.com/kgsearch/kgsearch/services/search/internal/eval"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "search service base URL")
	queries := flag.String("queries", "services/search/testdata/eval/pydocs.json", "judged query set (JSON)")
	k := flag.Int("k", 10, "cut-off rank")
	verbose := flag.Bool("v", false, "print every query's ranked pages per system")
	weights := flag.String("weights", "", "weights for the full pipeline (default: the service's)")
	fusion := flag.String("fusion", "", "fusion for the full pipeline (weighted or rrf)")
	flag.Parse()
	set, err := eval.Load(*queries)
	if err != nil {
		fmt.Fprintln(os.Stderr, "searcheval:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	full := url.Values{}
	if *weights != "" {
		full.Set("weights", *weights)
	}
	if *fusion != "" {
		full.Set("fusion", *fusion)
	}
	scores, err := eval.Run(ctx, *base, set, *k, full, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "searcheval:", err)
		os.Exit(1)
	}
	if *verbose {
		for _, s := range scores {
			fmt.Printf("## %s\n", s.System)
			for _, q := range s.PerQuery {
				fmt.Printf("%.3f  %s\n       %s\n", q.NDCG, q.Q, strings.Join(q.Got, " "))
			}
		}
	}
	fmt.Printf("%d queries over %s\n\n%s", len(set.Queries), set.Site, eval.Table(scores, *k))
	for _, s := range scores[1:] {
		if scores[0].NDCG <= s.NDCG {
			fmt.Printf("\nthe full pipeline does not beat %s on nDCG@%d (%.3f <= %.3f)\n", s.System, *k, scores[0].NDCG, s.NDCG)
		}
	}
}
