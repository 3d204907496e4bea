// Command kgs is kgsearch's command line: crawl, search, status, documents and the
// MCP server on stdio. See internal/kgscli for the commands and exit codes.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kgsearch/kgsearch/internal/kgscli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := kgscli.Main(ctx, os.Args[1:], kgscli.IO{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr, IsTerminal: isTerminal(os.Stdout), Getenv: os.Getenv,
	})
	stop()
	os.Exit(code)
}

// isTerminal reports whether f is a character device (a terminal), for the
// progress bar; pipes and files get plain lines.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
