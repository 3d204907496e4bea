package kgscli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// serviceState is one service in `kgs status`.
type serviceState struct {
	Service string            `json:"service"`
	URL     string            `json:"url"`
	State   string            `json:"state"` // ready, not ready, unreachable, error
	Checks  map[string]string `json:"checks,omitempty"`
	Error   string            `json:"error,omitempty"`
	Info    map[string]any    `json:"info,omitempty"`
}

func newStatusCmd(o *options) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Readiness of the three services, the search index's lag and the graph's counts",
		Long:  "Exits 0 when every service is ready, 1 otherwise (the table still shows each one).",
		Args:  args(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkChoice("--format", format, "table", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			states := []serviceState{
				probe(ctx, "search", o.searchURL, o.search().Ready, o.search().Status,
					"index_lag", "caught_up", "documents", "indexed_chunks", "model"),
				probe(ctx, "crawler", o.crawlerURL, o.crawler().Ready, nil),
				probe(ctx, "kg", o.kgURL, o.kgStatus().Ready, o.kgStatus().Stats,
					"documents", "chunks", "entities", "relations", "mentions"),
			}
			if format == "json" {
				if err := json.NewEncoder(o.io.Out).Encode(map[string]any{"services": states}); err != nil {
					return err
				}
			} else {
				for _, s := range states {
					fmt.Fprintf(o.io.Out, "%-8s %-12s %s\n", s.Service, s.State, s.URL)
					if s.Error != "" {
						fmt.Fprintf(o.io.Out, "         %s\n", s.Error)
					}
					if len(s.Checks) > 0 {
						fmt.Fprintf(o.io.Out, "         checks: %s\n", kv(s.Checks))
					}
					if len(s.Info) > 0 {
						fmt.Fprintf(o.io.Out, "         %s\n", kv(s.Info))
					}
				}
			}
			var bad []string
			for _, s := range states {
				if s.State != "ready" {
					bad = append(bad, s.Service+" "+s.State)
				}
			}
			if len(bad) > 0 {
				return &exitError{code: ExitError, msg: "not ready: " + strings.Join(bad, ", ")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "output: table or json")
	return cmd
}

// probe reads a service's /readyz and, when it answers, the listed keys of its
// status endpoint.
func probe(ctx context.Context, name, url string, ready, info func(context.Context) (map[string]any, error), keys ...string) serviceState {
	s := serviceState{Service: name, URL: url, State: "ready"}
	r, err := ready(ctx)
	if checks, ok := r["checks"].(map[string]any); ok {
		s.Checks = map[string]string{}
		for k, v := range checks {
			s.Checks[k] = fmt.Sprint(v)
		}
	}
	if err != nil {
		s.State, s.Error = "not ready", err.Error()
		if exitCode(err) == ExitUnreachable {
			s.State, s.Checks = "unreachable", nil
			return s
		}
	}
	if info == nil {
		return s
	}
	m, err := info(ctx)
	if err != nil {
		s.Error = strings.TrimSpace(s.Error + " " + err.Error())
		return s
	}
	s.Info = map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			s.Info[k] = v
		}
	}
	return s
}

func kv[V any](m map[string]V) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return strings.Join(parts, " ")
}
