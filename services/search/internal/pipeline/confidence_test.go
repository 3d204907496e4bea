package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// The confidence cut leaves out what the rules keep on weak evidence (a lower-case
// identifier the pages mention in passing, no title, heading or query word naming
// it) and keeps what the top page defines and is about.
func TestRelatedConfidenceCut(t *testing.T) {
	q := query("priority queue")
	results := queuePages()
	weak := []kgapi.WeightedEntity{{EntityRef: kgapi.EntityRef{ID: "maxsize", Name: "maxsize", Type: "identifier"}, Weight: 0.3, Documents: 6}}
	pages := topPages(results, nil, nil)
	if diff := cmp.Diff([]string{"maxsize"}, names(relatedEntities(q, weak, results, pages, 650))); diff != "" {
		t.Fatalf("the rules alone (-want +got):\n%s", diff)
	}
	shown, considered := relatedWithin(defaultRelatedMinConfidence, q, weak, results, pages, 650)
	if len(shown) != 0 {
		t.Errorf("shown %v, want none: confidence under the default cut", names(shown))
	}
	if len(considered) != 1 || considered[0].Shown || considered[0].Confidence >= defaultRelatedMinConfidence ||
		len(considered[0].Features) != numFeatures {
		t.Errorf("considered %+v, want maxsize not shown, under the cut, with %d features", considered, numFeatures)
	}
	// An operator who wants every entity the rules keep sets the cut off.
	if diff := cmp.Diff([]string{"maxsize"}, names(first(relatedWithin(noConfidenceCut, q, weak, results, pages, 650)))); diff != "" {
		t.Errorf("without the cut (-want +got):\n%s", diff)
	}

	strong := []kgapi.WeightedEntity{{EntityRef: kgapi.EntityRef{ID: "dictreader", Name: "DictReader", Type: "class"}, Weight: 0.2, Documents: 2}}
	shown, considered = relatedWithin(defaultRelatedMinConfidence, query("read a csv file"), strong, csvPages, topPages(csvPages, nil, nil), 650)
	if diff := cmp.Diff([]string{"DictReader"}, names(shown)); diff != "" {
		t.Errorf("the class the top page defines (-want +got):\n%s (considered %+v)", diff, considered)
	}
}

func first(r []RelatedEntity, _ []RelatedCandidate) []RelatedEntity { return r }

// The features are what the model was fitted on: their names line up with the
// weights, and the shape features read the name.
func TestRelatedFeatures(t *testing.T) {
	if len(featureNames) != len(confidenceWeights) {
		t.Fatalf("%d feature names, %d weights", len(featureNames), len(confidenceWeights))
	}
	k := keptEntity{e: candidateEntity{name: "os.makedirs", typ: "function", weight: 0.2}, score: 0.4, share: 0.01,
		ev: evidence{title: true, query: true, prose: 3}}
	x := relatedFeatures(k, 1)
	want := map[int]float64{featBias: 1, featScore: 0.4, featWeight: 0.2, featShare: 0.01, featSecond: 1, featQuery: 1,
		featTitle: 1, featProse: 0.6, featDotted: 1, featLength: 0.55, featFunction: 1}
	for i := range numFeatures {
		if x[i] != want[i] {
			t.Errorf("feature %s = %g, want %g", featureNames[i], x[i], want[i])
		}
	}
	for _, tc := range []struct {
		name string
		feat int
	}{{"query", featLowerWord}, {"ALLOWED_HOSTS", featUnderscore}, {"DictReader", featCamel}, {"CSV", featUpper},
		{"Class-based views", featSpace}, {"Counter", featCapital}, {"debug", featEveryday}} {
		if relatedFeatures(keptEntity{e: candidateEntity{name: tc.name}}, 0)[tc.feat] != 1 {
			t.Errorf("%q: feature %s not set", tc.name, featureNames[tc.feat])
		}
	}
}

// A suggestion replaces what the user typed, so it needs more confidence than a
// related entity shown beside the results.
func TestSuggestionConfidenceCut(t *testing.T) {
	related := []RelatedEntity{{Name: "argparse"}, {Name: "getopt"}}
	considered := []RelatedCandidate{{Name: "argparse", Confidence: 0.9, Shown: true}, {Name: "getopt", Confidence: 0.8, Shown: true}}
	if diff := cmp.Diff([]string{"argparse"}, names(confident(related, considered, defaultSuggestMinConfidence))); diff != "" {
		t.Errorf("suggestible at the default cut (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"argparse", "getopt"}, names(confident(related, considered, noConfidenceCut))); diff != "" {
		t.Errorf("suggestible without the cut (-want +got):\n%s", diff)
	}
	if defaultSuggestMinConfidence < defaultRelatedMinConfidence {
		t.Errorf("the suggestion cut %g is below the related-entity cut %g", defaultSuggestMinConfidence, defaultRelatedMinConfidence)
	}
}
