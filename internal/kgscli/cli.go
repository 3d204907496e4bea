// Package kgscli is the `kgs` command line (cmd/kgs): crawl with a live progress
// bar, search with score breakdowns, service status, documents, and the MCP
// server on stdio. It talks to the services' REST APIs through pkg/apiclient and
// pkg/kgapi. Main returns the exit code, so tests run the commands in process.
//
// Exit codes, for scripts:
//
//	0  done
//	1  a service failed or answered an error not listed below, or a crawl ended failed/cancelled
//	2  usage: a bad flag, argument or value (nothing was sent, or the service refused it with 400)
//	3  authentication: the API key is missing or wrong (401/403)
//	4  not found (404)
//	5  a service could not be reached
package kgscli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitAuth        = 3
	ExitNotFound    = 4
	ExitUnreachable = 5
)

// IO is where a command reads and writes; IsTerminal says whether Out is a terminal.
type IO struct {
	In         io.Reader
	Out        io.Writer
	Err        io.Writer
	IsTerminal bool
	Getenv     func(string) string
}

// usageError is a mistake in the command line; it exits 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// exitError carries an exit code chosen by a command (a failed crawl).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Main runs kgs with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, io IO) int {
	if io.Getenv == nil {
		io.Getenv = os.Getenv
	}
	root := newRoot(io)
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	msg := err.Error()
	var ue *usageError
	if errors.As(err, &ue) || strings.HasPrefix(msg, "unknown command ") {
		// A mistake in the command line; a service's 400 (also exit 2) says
		// itself what to change, and the help would not know.
		msg += " (see kgs --help)"
	}
	if errors.Is(err, apiclient.ErrUnreachable) {
		msg += " (is it running? kgs finds the services at --search-url, --crawler-url and --kg-url, or KGS_SEARCH_URL, KGS_CRAWLER_URL and KGS_KG_URL)"
	}
	fmt.Fprintf(io.Err, "kgs: %s\n", msg)
	return code
}

// exitCode maps an error to the documented exit codes.
func exitCode(err error) int {
	var ue *usageError
	var ee *exitError
	var ae *apiclient.Error
	var se *kgapi.StatusError
	switch {
	case errors.As(err, &ue), strings.HasPrefix(err.Error(), "unknown command "):
		return ExitUsage
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ae):
		return statusCode(ae.Status)
	case errors.As(err, &se):
		return statusCode(se.Status)
	case errors.Is(err, apiclient.ErrUnreachable), errors.Is(err, kgapi.ErrUnavailable):
		return ExitUnreachable
	}
	return ExitError
}

func statusCode(status int) int {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return ExitAuth
	case http.StatusNotFound:
		return ExitNotFound
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge:
		return ExitUsage
	}
	return ExitError
}

// options are the global flags.
type options struct {
	io         IO
	searchURL  string
	crawlerURL string
	kgURL      string
	apiKey     string
	timeout    time.Duration
}

func (o *options) search() *apiclient.SearchClient {
	return apiclient.NewSearch(o.searchURL, o.httpClient(), o.apiKey)
}

func (o *options) crawler() *apiclient.CrawlerClient {
	return apiclient.NewCrawler(o.crawlerURL, o.httpClient(), o.apiKey)
}

func (o *options) kg() *kgapi.Client { return kgapi.NewClient(o.kgURL, o.httpClient(), o.apiKey) }

func (o *options) kgStatus() *apiclient.KGClient {
	return apiclient.NewKG(o.kgURL, o.httpClient(), o.apiKey)
}

func (o *options) httpClient() *http.Client { return &http.Client{Timeout: o.timeout} }

func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

func newRoot(io IO) *cobra.Command {
	o := &options{io: io}
	root := &cobra.Command{
		Use:   "kgs",
		Short: "kgsearch from the command line: crawl, search, status, documents, MCP",
		Long: `kgs talks to the kgsearch services.

Endpoints and the API key come from flags or the environment:
  KGS_SEARCH_URL (http://127.0.0.1:8080), KGS_CRAWLER_URL (http://127.0.0.1:8081),
  KGS_KG_URL (http://127.0.0.1:8088), KGS_API_KEY (sent as Authorization: Bearer).

Exit codes: 0 done; 1 service error or a crawl that ended failed or cancelled; 2 usage (bad flag or value);
3 API key missing or wrong; 4 not found; 5 a service could not be reached.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			for name, u := range map[string]string{"search-url": o.searchURL, "crawler-url": o.crawlerURL, "kg-url": o.kgURL} {
				if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
					return usagef("--%s: %q is not an http(s) URL", name, u)
				}
				if pu, err := url.Parse(u); err == nil {
					if p := strings.TrimRight(pu.Path, "/"); strings.HasSuffix(p, "/api") || strings.Contains(p, "/api/") {
						pu.Path = p[:strings.Index(p+"/", "/api/")]
						return usagef("--%s: %q: give the service's base URL, without /api/..., e.g. %s", name, u, pu.String())
					}
				}
			}
			if o.timeout <= 0 {
				return usagef("--timeout: must be positive, got %s", o.timeout)
			}
			return nil
		},
	}
	f := root.PersistentFlags()
	f.StringVar(&o.searchURL, "search-url", envOr(io.Getenv, "KGS_SEARCH_URL", "http://127.0.0.1:8080"), "search service `URL` (KGS_SEARCH_URL)")
	f.StringVar(&o.crawlerURL, "crawler-url", envOr(io.Getenv, "KGS_CRAWLER_URL", "http://127.0.0.1:8081"), "crawler `URL` (KGS_CRAWLER_URL)")
	f.StringVar(&o.kgURL, "kg-url", envOr(io.Getenv, "KGS_KG_URL", "http://127.0.0.1:8088"), "kg service `URL` (KGS_KG_URL)")
	f.StringVar(&o.apiKey, "api-key", io.Getenv("KGS_API_KEY"), "API `key` sent as a bearer token (KGS_API_KEY)")
	f.DurationVar(&o.timeout, "timeout", 60*time.Second, "timeout of one request (event streams are not bounded)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usagef("%s: %v", cmd.CommandPath(), err)
	})
	root.AddCommand(newCrawlCmd(o), newJobCmd(o), newSearchCmd(o), newStatusCmd(o), newDocsCmd(o), newMCPCmd(o))
	return root
}

// args checks the positional arguments as a usage error.
func args(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) != n {
			return usagef("%s: want %s, got %d arguments", cmd.CommandPath(), what, len(a))
		}
		return nil
	}
}
