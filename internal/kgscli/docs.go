package kgscli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// defaultDocsLimit is the page size of `kgs docs list`.
const defaultDocsLimit = 50

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
			if err := checkHost(domain); err != nil {
				return err
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
				fmt.Fprintf(o.io.Out, "more: %s\n", nextPageCommand(domain, limit, page.NextAfter))
			}
			return nil
		},
	}
	list.Flags().StringVar(&format, "format", "table", "output: table or json")
	list.Flags().StringVar(&domain, "domain", "", "only this host name (no port)")
	list.Flags().StringVar(&after, "after", "", "the next_after cursor of the previous page")
	list.Flags().IntVar(&limit, "limit", defaultDocsLimit, "documents per page, 1..1000")

	var chunks bool
	var getFormat string
	get := &cobra.Command{
		Use:   "get ID",
		Short: "Show a document (JSON), with --chunks its chunks and their offsets; or one chunk, by the chunk id a search result shows",
		Args:  args(1, "a document id or a chunk id"),
		RunE: func(cmd *cobra.Command, a []string) error {
			if err := checkChoice("--format", getFormat, "json"); err != nil {
				return err
			}
			var v any
			var err error
			if id := strings.TrimSpace(a[0]); isChunkID(id) {
				v, err = o.crawler().Chunk(cmd.Context(), id)
			} else {
				v, err = o.crawler().Document(cmd.Context(), id, chunks)
			}
			if err != nil {
				return err
			}
			enc := json.NewEncoder(o.io.Out)
			enc.SetIndent("", "  ")
			return enc.Encode(v)
		},
	}
	get.Flags().BoolVar(&chunks, "chunks", false, "include the chunks with their text and byte offsets")
	get.Flags().StringVar(&getFormat, "format", "json", "output: json")

	var delDomain string
	del := &cobra.Command{
		Use:   "delete ID... | delete --domain HOST",
		Short: "Delete documents, or every document of a host (chunks, vectors; search and kg follow); needs the API key when keys are set",
		Args: func(cmd *cobra.Command, a []string) error {
			switch {
			case delDomain != "" && len(a) > 0:
				return usagef("%s: give document ids or --domain, not both", cmd.CommandPath())
			case delDomain == "" && len(a) == 0:
				return usagef("%s: want one or more document ids, or --domain HOST", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, a []string) error {
			if delDomain != "" {
				if err := checkHost(delDomain); err != nil {
					return err
				}
				return deleteDomain(cmd.Context(), o, delDomain)
			}
			for _, id := range a {
				if err := o.crawler().DeleteDocument(cmd.Context(), id); err != nil {
					return fmt.Errorf("delete %s: %w", id, err)
				}
				fmt.Fprintf(o.io.Out, "deleted %s\n", id)
			}
			return nil
		},
	}
	del.Flags().StringVar(&delDomain, "domain", "", "delete every document of this host name (no port: every port of it), in batches, with progress")
	cmd.AddCommand(list, get, del)
	return cmd
}

// isChunkID says whether id is a chunk id (digits, as search results cite
// chunks) rather than a document id (32 hex characters).
func isChunkID(id string) bool {
	_, err := strconv.ParseInt(id, 10, 64)
	return err == nil && len(id) <= 20
}

// checkHost refuses a --domain that names a port, a scheme or a path:
// documents are stored under their URL's host name alone, so such a filter
// would list nothing. It names the host to give instead.
func checkHost(domain string) error {
	d := strings.TrimSpace(domain)
	host := d
	if u, err := url.Parse(d); err == nil && u.Scheme != "" && u.Host != "" {
		host = u.Hostname()
	} else if h, port, err := net.SplitHostPort(d); err == nil && h != "" && port != "" {
		host = h
	} else if len(d) > 2 && d[0] == '[' && d[len(d)-1] == ']' {
		host = d[1 : len(d)-1]
	}
	if host != d {
		return usagef("--domain %q: documents are filtered by host name, without scheme or port: give --domain %s", d, host)
	}
	return nil
}

// nextPageCommand is the command line that lists the next page with the
// same filter and page size.
func nextPageCommand(domain string, limit int, after string) string {
	cmd := "kgs docs list"
	if domain != "" {
		cmd += " --domain " + shellQuote(domain)
	}
	if limit != defaultDocsLimit {
		cmd += fmt.Sprintf(" --limit %d", limit)
	}
	return cmd + " --after " + shellQuote(after)
}

// shellQuote quotes s for a POSIX shell unless it is made only of
// characters a shell takes literally.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:/") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// deleteDomain deletes a host's documents batch by batch, printing the count
// after each, until none is left.
func deleteDomain(ctx context.Context, o *options, domain string) error {
	total := 0
	for {
		res, err := o.crawler().DeleteDomain(ctx, domain, 0)
		if err != nil {
			return fmt.Errorf("delete documents of %s: %w", domain, err)
		}
		total += res.Deleted
		if !res.More {
			fmt.Fprintf(o.io.Out, "deleted %d documents of %s\n", total, res.Domain)
			return nil
		}
		if res.Deleted == 0 {
			return fmt.Errorf("delete documents of %s: the crawler deleted none of those left; try again", domain)
		}
		fmt.Fprintf(o.io.Out, "deleted %d documents of %s so far\n", total, res.Domain)
	}
}
