// Package docid is the one definition of a document's id: the crawler stores a page
// under it (pkg/store), and the kg service derives from it the id of a link's target
// page that the crawler has not sent yet, so both name a page the same way.
package docid

import (
	"crypto/sha256"
	"encoding/hex"
)

// FromURL is the stable id of a canonical URL: the first 16 bytes of its SHA-256,
// hex (32 characters). It does not canonicalise: pass a canonical URL.
func FromURL(canonicalURL string) string {
	sum := sha256.Sum256([]byte(canonicalURL))
	return hex.EncodeToString(sum[:16])
}

// Valid reports whether s has the shape of an id FromURL returns: 32 lower-case
// hexadecimal digits. APIs use it to refuse a malformed id (a pagination cursor, a
// path segment) with a clear message instead of looking it up.
func Valid(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
