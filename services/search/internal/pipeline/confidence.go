package pipeline

import (
	"math"
	"strings"
	"unicode"
)

// Confidence of a related entity: the probability, by a logistic model over what
// the selection already knows about it, that a reader finds it useful. The model
// was fitted on judged items (eval/suggest/train_related.py, README "Eighth
// round"): evidence alone (a title, a heading, a query word) does not separate the
// useful entities from the neighbouring APIs and generic words the results also
// name, but together with the entity's score, its type and the shape of its name
// it ranks them well enough to leave out the least likely, which is what
// Options.RelatedMinConfidence does. Suggestions follow: a related entity left out
// suggests nothing.

// relatedFeature indexes the features; the order is the model's.
const (
	featBias = iota
	featScore
	featWeight
	featShare
	featSecond
	featQuery
	featFirst
	featTitle
	featHeading
	featProse
	featDotted
	featUnderscore
	featCamel
	featLowerWord
	featUpper
	featSpace
	featCapital
	featLength
	featEveryday
	featModule
	featClass
	featFunction
	featIdentifier
	featConcept
	featAttribute
	featConstant
	featMethod
	numFeatures
)

// featureNames name the features for the training script (same order).
var featureNames = [numFeatures]string{
	"bias", "score", "weight", "share", "second", "query", "first", "title", "heading", "prose",
	"dotted", "underscore", "camel", "lower_word", "upper", "space", "capital", "length", "everyday",
	"module", "class", "function", "identifier", "concept", "attribute", "constant", "method",
}

// typeFeature is the feature set for each entity type the model reads.
var typeFeature = map[string]int{"module": featModule, "class": featClass, "function": featFunction,
	"identifier": featIdentifier, "concept": featConcept, "attribute": featAttribute, "constant": featConstant,
	"method": featMethod}

// relatedFeatures describes a kept entity for the confidence model; rank is its
// place among the kept entities (0 for the best).
func relatedFeatures(k keptEntity, rank int) [numFeatures]float64 {
	var x [numFeatures]float64
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	name := k.e.name
	x[featBias] = 1
	x[featScore] = k.score
	x[featWeight] = k.e.weight
	x[featShare] = k.share
	x[featSecond] = b(rank > 0)
	x[featQuery] = b(k.ev.query)
	x[featFirst] = b(k.ev.first)
	x[featTitle] = b(k.ev.title)
	x[featHeading] = b(k.ev.heading)
	x[featProse] = float64(min(k.ev.prose, aboutPages)) / aboutPages
	x[featDotted] = b(strings.Contains(name, "."))
	x[featUnderscore] = b(strings.Contains(name, "_"))
	x[featCamel] = b(hasInnerCapital(name))
	x[featLowerWord] = b(isLetters(name) && name == strings.ToLower(name))
	x[featUpper] = b(isLetters(name) && name == strings.ToUpper(name))
	x[featSpace] = b(strings.Contains(name, " "))
	x[featCapital] = b(name != "" && unicode.IsUpper([]rune(name)[0]))
	x[featLength] = float64(min(len(name), 40)) / 20
	x[featEveryday] = b(everydayName(name))
	if f, ok := typeFeature[k.e.typ]; ok {
		x[f] = 1
	}
	return x
}

// confidence is the model's probability that the entity is useful.
func confidence(x [numFeatures]float64) float64 {
	z := 0.0
	for i, w := range confidenceWeights {
		z += w * x[i]
	}
	return 1 / (1 + math.Exp(-z))
}

func hasInnerCapital(s string) bool {
	var prev rune
	for _, r := range s {
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			return true
		}
		prev = r
	}
	return false
}

func isLetters(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// confidenceWeights were fitted by eval/suggest/train_related.py on 544 judged related
// entities (the seventh round's 459 queries and the third batch of judging-only
// queries; README "Eighth round"), in featureNames order. The default cut, 0.75, is the
// lowest at which the cross-validated precision on the third batch (queries written
// after every rule, like a new user's) reaches 0.8 on both dev corpora; it keeps about
// 60 % of what the rules keep.
var confidenceWeights = [numFeatures]float64{-0.4958, 2.3337, 1.0712, -0.2870, 0.0713, 0.6009, 0.9278, -0.4251, 0.1795, -0.1559, -0.0517, 0.3220, 0.0428, -0.4367, -0.5753, -0.0088, -0.3812, 1.1079, -0.5199, 1.4110, -0.0287, -0.2478, -0.5940, 0.0323, -0.2041, 0.0886, 0.5556}

// defaultRelatedMinConfidence is Options.RelatedMinConfidence's default;
// noConfidenceCut shows whatever the rules keep.
const (
	defaultRelatedMinConfidence = 0.75
	// defaultSuggestMinConfidence is stricter: a suggestion replaces what the user
	// typed, while a related entity only stands beside the results. 0.85 is the
	// lowest cut at which the cross-validated precision of suggestions reaches 0.8
	// on both dev corpora, in both the seventh round's queries and the third batch
	// (README "Eighth round"); it keeps about 40 % of the suggestions.
	defaultSuggestMinConfidence = 0.85
	noConfidenceCut             = -1.0
)

// confident returns the shown related entities whose confidence (from the kept
// candidates) is at least minConf: those that may also be suggested queries.
func confident(related []RelatedEntity, considered []RelatedCandidate, minConf float64) []RelatedEntity {
	conf := make(map[string]float64, len(considered))
	for _, c := range considered {
		conf[c.Name] = c.Confidence
	}
	var out []RelatedEntity
	for _, r := range related {
		if c, ok := conf[r.Name]; ok && c >= minConf || !ok && minConf < 0 {
			out = append(out, r)
		}
	}
	return out
}
