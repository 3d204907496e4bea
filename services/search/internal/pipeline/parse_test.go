package pipeline

import (
	"errors"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/queryparse"
)

// TestQueryErrorSaysWhatIsMissing: a blank query is empty, but one of punctuation
// or emoji is not, and the answer must not tell its author it is.
func TestQueryErrorSaysWhatIsMissing(t *testing.T) {
	p := queryparse.New(nil)
	for q, want := range map[string]string{
		"   ":      "the query is empty",
		"\x00\t":   "the query is empty",
		"...":      "no letters or digits",
		"🙂":        "no letters or digits",
		"-- ?! --": "no letters or digits",
	} {
		_, err := p.Parse(q)
		var fe *FieldError
		if !errors.As(queryError(err, q), &fe) || fe.Field != "q" || !strings.Contains(fe.Reason, want) {
			t.Errorf("%q: got %v, want a q error saying %q", q, queryError(err, q), want)
		}
	}
}
