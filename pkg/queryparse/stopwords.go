package queryparse

// stopWords are English function words that carry no topic; question and action
// words are kept out of Terms too, since intent already records them.
var stopWords = wordSet(
	"a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "in", "on", "at", "to", "for",
	"from", "by", "with", "without", "about", "as", "into", "onto", "over", "under", "between",
	"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "doing", "done",
	"have", "has", "had", "i", "me", "my", "we", "our", "you", "your", "he", "she", "it", "its",
	"they", "them", "their", "this", "that", "these", "those", "there", "here", "what", "which",
	"who", "whom", "whose", "when", "where", "why", "how", "can", "could", "should", "would",
	"will", "shall", "may", "might", "must", "not", "no", "so", "than", "too", "very", "just",
	"also", "any", "some", "all", "each", "every", "more", "most", "other", "such", "only",
	"own", "same", "both", "either", "neither", "s", "t", "vs", "versus", "via", "using", "use",
	"get", "way", "ways", "thing", "things", "please", "tell", "explain", "show", "find",
)

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
