package kgscli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

func newDocsCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "docs", Short: "List, show and delete stored documents"}
	var format, domain, after string
	var limit int
	list := &cobra.Command{
		Use:   "list",
		Short: "List documents (id order; --after pages on)",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkChoice("--format", format, "table", "json"); err != nil {
				return err
			}
			if limit < 1 || limit > 1000 {
				return usagef("--limit: want 1..1000, got %d", limit)
			}
			page, err := o.crawler().Documents(cmd.Context(), domain, after, limit)
			if err != nil {
				return err
			}
			if format == "json" {
				return json.NewEncoder(o.io.Out).Encode(page)
			}
			tw := tabwriter.NewWriter(o.io.Out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCHUNKS\tUPDATED\tTITLE\tURL")
			for _, d := range page.Documents {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", d.ID, d.ChunkCount, d.UpdatedAt.Format("2006-01-02 15:04"), clip(d.Title, 50), d.URL)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if page.NextAfter != "" {
				fmt.Fprintf(o.io.Out, "more: kgs docs list --after %s\n", page.NextAfter)
			}
			return nil
		},
	}
	list.Flags().StringVar(&format, "format", "table", "output: table or json")
	list.Flags().StringVar(&domain, "domain", "", "only this host")
	list.Flags().StringVar(&after, "after", "", "the next_after cursor of the previous page")
	list.Flags().IntVar(&limit, "limit", 50, "documents per page, 1..1000")

	var chunks bool
	var getFormat string
	get := &cobra.Command{
		Use:   "get ID",
		Short: "Show a document (JSON), with --chunks its chunks and their offsets",
		Args:  args(1, "a document id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := checkChoice("--format", getFormat, "json"); err != nil {
				return err
			}
			d, err := o.crawler().Document(cmd.Context(), a[0], chunks)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(o.io.Out)
			enc.SetIndent("", "  ")
			return enc.Encode(d)
		},
	}
	get.Flags().BoolVar(&chunks, "chunks", false, "include the chunks with their text and byte offsets")
	get.Flags().StringVar(&getFormat, "format", "json", "output: json")

	del := &cobra.Command{
		Use:   "delete ID...",
		Short: "Delete documents (chunks, vectors; search and kg follow); needs the API key when keys are set",
		Args: func(cmd *cobra.Command, a []string) error {
			if len(a) == 0 {
				return usagef("%s: want one or more document ids", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			for _, id := range a {
				if err := o.crawler().DeleteDocument(cmd.Context(), id); err != nil {
					return fmt.Errorf("delete %s: %w", id, err)
				}
				fmt.Fprintf(o.io.Out, "deleted %s\n", id)
			}
			return nil
		},
	}
	cmd.AddCommand(list, get, del)
	return cmd
}
