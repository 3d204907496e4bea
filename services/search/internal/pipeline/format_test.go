package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/queryparse"
)

func TestSuggestions(t *testing.T) {
	asyncio := queryparse.Query{Normalized: "cancel asyncio tasks", Entities: []queryparse.Entity{{Text: "asyncio", Name: "asyncio"}}}
	plain := queryparse.Query{Normalized: "parse command line arguments"}
	for _, tc := range []struct {
		name    string
		q       queryparse.Query
		related []RelatedEntity
		want    []string
	}{
		{"what the results are about, not rewrites with expansion neighbours", asyncio, []RelatedEntity{
			{Name: "asyncio.Task", Source: "results"},
			{Name: "Task.cancel", Source: "results"},
			{Name: "threading", Source: "expansion"},
		}, []string{"asyncio.task", "task.cancel"}},
		{"at most three from the results", plain, []RelatedEntity{
			{Name: "argparse", Source: "results"}, {Name: "getopt", Source: "results"},
			{Name: "optparse", Source: "results"}, {Name: "sys.argv", Source: "results"},
		}, []string{"argparse", "getopt", "optparse"}},
		{"numbers, versions, sentences and the query's own words are no suggestion", plain, []RelatedEntity{
			{Name: "3.11", Source: "results"}, {Name: "42", Source: "results"}, {Name: "arguments", Source: "results"},
			{Name: "a very long phrase that reads like a sentence", Source: "results"},
		}, []string{}},
		{"expansion neighbours alone give none", plain, []RelatedEntity{{Name: "click", Source: "expansion"}}, []string{}},
		{"nothing to suggest", plain, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, suggestions(tc.q, tc.related)); diff != "" {
				t.Errorf("suggestions (-want +got):\n%s", diff)
			}
		})
	}
}
