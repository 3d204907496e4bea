package queryparse

import (
	"regexp"
	"strings"
)

var (
	urlLike   = regexp.MustCompile(`(?:https?://|www\.)\S+|\b[a-z0-9-]+\.(?:com|org|net|io|dev|edu|gov)\b`)
	siteOp    = regexp.MustCompile(`\b(?:site|inurl|intitle):`)
	questionW = map[string]bool{"how": true, "what": true, "why": true, "when": true, "which": true, "who": true, "where": true, "does": true, "is": true, "are": true, "can": true, "should": true, "explain": true, "difference": true, "vs": true, "versus": true, "compare": true, "example": true, "examples": true}
	actionW   = map[string]bool{"install": true, "download": true, "buy": true, "setup": true, "set": true, "configure": true, "upgrade": true, "uninstall": true, "deploy": true, "run": true, "enable": true, "disable": true, "create": true, "pricing": true, "price": true, "subscribe": true, "register": true, "signup": true, "convert": true, "migrate": true}
	navW      = map[string]bool{"homepage": true, "home": true, "website": true, "site": true, "login": true, "docs": true, "documentation": true, "reference": true, "manual": true, "official": true, "page": true, "changelog": true, "api": true}
)

// classify returns the intent and how sure the rules are (0..1).
func classify(n string, terms []string, ents []Entity) (Intent, float64) {
	if urlLike.MatchString(n) || siteOp.MatchString(n) {
		return Navigational, 0.9
	}
	words := strings.Fields(n)
	var q, a, nav int
	for i, w := range words {
		w = strings.Trim(w, "?!.,:;\"'")
		switch {
		case questionW[w]:
			q++
			if i == 0 {
				q++ // a leading question word is a strong signal
			}
		case actionW[w]:
			a++
			if i == 0 {
				a++
			}
		case navW[w]:
			nav++
		}
	}
	if strings.HasSuffix(n, "?") {
		q += 2
	}
	switch {
	case a > 0 && a >= q:
		return Transactional, clamp(0.55 + 0.15*float64(a-q))
	case q > 0:
		return Informational, clamp(0.6 + 0.1*float64(q))
	case nav > 0 && len(terms) <= 4:
		return Navigational, clamp(0.55 + 0.1*float64(nav))
	case len(ents) > 0 && len(terms) <= len(ents):
		// A bare entity name ("asyncio") is most often a lookup of its page.
		return Navigational, 0.5
	}
	return Informational, 0.4
}

func clamp(x float64) float64 {
	if x > 0.95 {
		return 0.95
	}
	return x
}
