package toon

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// writer renders a value tree as TOON text. Every line is terminated by a
// newline while writing; the final newline is dropped by finish.
type writer struct {
	buf   []byte
	cfg   *config
	delim byte
	// rootDotted holds the root object's literal keys that contain a dot;
	// folding never produces one of them (§13.4 collision avoidance).
	rootDotted map[string]struct{}
}

func (w *writer) indent(depth int) {
	n := depth * w.cfg.indent
	for n > 0 {
		const spaces = "                                "
		k := min(n, len(spaces))
		w.buf = append(w.buf, spaces[:k]...)
		n -= k
	}
}

func (w *writer) nl() { w.buf = append(w.buf, '\n') }

// encodeDocument writes root as a complete document without trailing newline.
func (w *writer) encodeDocument(root *node) {
	w.delim = w.cfg.delim
	start := len(w.buf)
	switch root.kind {
	case kObject:
		if w.cfg.keyFolding {
			for i := range root.kids {
				k := root.kids[i].key
				if containsByte(k, '.') {
					if w.rootDotted == nil {
						w.rootDotted = make(map[string]struct{})
					}
					w.rootDotted[k] = struct{}{}
				}
			}
		}
		w.writeFields(root, 0, "", w.cfg.flattenDepth)
	case kArray:
		w.writeArray("", false, root, 0, false)
	default:
		w.writePrimitive(root, w.delim)
		w.nl()
	}
	if len(w.buf) > start && w.buf[len(w.buf)-1] == '\n' {
		w.buf = w.buf[:len(w.buf)-1]
	}
}

func containsByte(s string, c byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return true
		}
	}
	return false
}

// writeFields writes the members of obj at depth, one per line.
func (w *writer) writeFields(obj *node, depth int, path string, budget int) {
	for i := range obj.kids {
		w.writeMember(obj, &obj.kids[i], depth, false, path, budget)
	}
}

// writeMember writes one object member. When onHyphen is set the caller has
// already written "- " (the member is the first field of a list item) and
// depth is the depth of the object's fields.
func (w *writer) writeMember(parent, m *node, depth int, onHyphen bool, path string, budget int) {
	if !onHyphen {
		w.indent(depth)
	}
	if w.cfg.keyFolding && m.kind == kObject && budget >= 2 {
		if w.tryFold(parent, m, depth, path, budget) {
			return
		}
	}
	w.writeKeyed(m.key, m, depth, joinPath(path, m.key), budget)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// writeKeyed writes "key..." for value v whose line prefix is already out.
func (w *writer) writeKeyed(key string, v *node, depth int, path string, budget int) {
	switch v.kind {
	case kObject:
		w.writeKey(key)
		w.buf = append(w.buf, ':', '\n')
		if len(v.kids) > 0 {
			if w.cfg.keyFolding {
				w.writeFields(v, depth+1, path, budget)
			} else {
				w.writeFields(v, depth+1, "", budget)
			}
		}
	case kArray:
		w.writeArray(key, true, v, depth, false)
	default:
		w.writeKey(key)
		w.buf = append(w.buf, ':', ' ')
		w.writePrimitive(v, w.delim)
		w.nl()
	}
}

// tryFold folds a chain of single-key objects starting at m (§13.4).
func (w *writer) tryFold(parent, m *node, depth int, path string, budget int) bool {
	if !isIdentifier(m.key) {
		return false
	}
	segs := 1
	cur := m
	for segs < budget && cur.kind == kObject && len(cur.kids) == 1 {
		cur = &cur.kids[0]
		if !isIdentifier(cur.key) {
			return false // every folded segment must be an identifier
		}
		segs++
	}
	if segs < 2 {
		return false
	}
	folded := m.key
	c := m
	for k := 1; k < segs; k++ {
		c = &c.kids[0]
		folded += "." + c.key
	}
	for i := range parent.kids {
		if parent.kids[i].key == folded {
			return false
		}
	}
	abs := joinPath(path, folded)
	if _, dup := w.rootDotted[abs]; dup && path != "" {
		return false
	}
	// cur is the value at the last folded segment.
	if cur.kind == kObject && len(cur.kids) > 0 {
		w.writeKey(folded)
		w.buf = append(w.buf, ':', '\n')
		w.writeFields(cur, depth+1, abs, budget-segs)
		return true
	}
	w.writeKeyed(folded, cur, depth, abs, budget-segs)
	return true
}

// isIdentifier matches the IdentifierSegment pattern ^[A-Za-z_][A-Za-z0-9_]*$.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

// isUnquotedKey matches §7.3: ^[A-Za-z_][A-Za-z0-9_.]*$.
func isUnquotedKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (i > 0 && (c >= '0' && c <= '9' || c == '.')) {
			continue
		}
		return false
	}
	return true
}

func (w *writer) writeKey(k string) {
	if isUnquotedKey(k) {
		w.buf = append(w.buf, k...)
		return
	}
	w.writeQuoted(k)
}

// arrayShape classifies an array for §9.
type arrayShape uint8

const (
	shapeEmpty arrayShape = iota
	shapeInline
	shapeArrays  // every element is an array of primitives
	shapeTabular // uniform objects with primitive values
	shapeList
)

func classify(a *node) arrayShape {
	if len(a.kids) == 0 {
		return shapeEmpty
	}
	allPrim, allPrimArrays := true, true
	for i := range a.kids {
		k := &a.kids[i]
		if !k.isPrimitive() {
			allPrim = false
		}
		if k.kind != kArray {
			allPrimArrays = false
		} else if allPrimArrays {
			for j := range k.kids {
				if !k.kids[j].isPrimitive() {
					allPrimArrays = false
					break
				}
			}
		}
		if !allPrim && !allPrimArrays {
			break
		}
	}
	switch {
	case allPrim:
		return shapeInline
	case allPrimArrays:
		return shapeArrays
	case isTabular(a):
		return shapeTabular
	}
	return shapeList
}

func isTabular(a *node) bool {
	first := &a.kids[0]
	if first.kind != kObject || len(first.kids) == 0 {
		return false
	}
	n := len(first.kids)
	for i := range a.kids {
		o := &a.kids[i]
		if o.kind != kObject || len(o.kids) != n {
			return false
		}
		for j := range o.kids {
			f := &o.kids[j]
			if !f.isPrimitive() {
				return false
			}
			// Fast path: same position; otherwise search by key.
			if i > 0 && first.kids[j].key != f.key && findKey(first, f.key) < 0 {
				return false
			}
		}
	}
	// Keys within one object are unique, so equal counts plus containment
	// means the key sets are equal.
	return true
}

func findKey(o *node, key string) int {
	for i := range o.kids {
		if o.kids[i].key == key {
			return i
		}
	}
	return -1
}

// writeArray writes an array whose line prefix (indent or "- ") is already
// written. hasKey says whether key is present (object field) or the array
// is keyless (root or list item). inItem marks a keyless array that is a
// list item, where the tabular form is not available. Children go to
// depth+1.
func (w *writer) writeArray(key string, hasKey bool, a *node, depth int, inItem bool) {
	shape := classify(a)
	if shape == shapeEmpty && !inItem {
		if hasKey {
			w.writeKey(key)
			w.buf = append(w.buf, ':', ' ', '[', ']', '\n')
		} else {
			w.buf = append(w.buf, '[', ']', '\n')
		}
		return
	}
	if hasKey {
		w.writeKey(key)
	}
	w.writeHeader(len(a.kids))
	switch shape {
	case shapeEmpty:
		w.buf = append(w.buf, ':', '\n')
	case shapeInline:
		w.buf = append(w.buf, ':', ' ')
		w.writeInline(a)
		w.nl()
	case shapeTabular:
		if inItem {
			w.buf = append(w.buf, ':', '\n')
			w.writeListItems(a, depth+1)
			return
		}
		first := &a.kids[0]
		w.buf = append(w.buf, '{')
		for j := range first.kids {
			if j > 0 {
				w.buf = append(w.buf, w.delim)
			}
			w.writeFieldName(first.kids[j].key)
		}
		w.buf = append(w.buf, '}', ':', '\n')
		w.writeRows(a, first, depth+1)
	default:
		w.buf = append(w.buf, ':', '\n')
		w.writeListItems(a, depth+1)
	}
}

func (w *writer) writeFieldName(k string) {
	if isUnquotedKey(k) {
		w.buf = append(w.buf, k...)
		return
	}
	w.writeQuoted(k)
}

func (w *writer) writeHeader(n int) {
	w.buf = append(w.buf, '[')
	w.buf = strconv.AppendInt(w.buf, int64(n), 10)
	if w.delim != ',' {
		w.buf = append(w.buf, w.delim)
	}
	w.buf = append(w.buf, ']')
}

func (w *writer) writeInline(a *node) {
	for i := range a.kids {
		if i > 0 {
			w.buf = append(w.buf, w.delim)
		}
		w.writePrimitive(&a.kids[i], w.delim)
	}
}

func (w *writer) writeRows(a, first *node, depth int) {
	for i := range a.kids {
		o := &a.kids[i]
		w.indent(depth)
		for j := range first.kids {
			if j > 0 {
				w.buf = append(w.buf, w.delim)
			}
			f := &o.kids[j]
			if i > 0 && f.key != first.kids[j].key {
				f = &o.kids[findKey(o, first.kids[j].key)]
			}
			w.writePrimitive(f, w.delim)
		}
		w.nl()
	}
}

// writeListItems writes each element as a "- " item at depth (§9.4, §10).
func (w *writer) writeListItems(a *node, depth int) {
	for i := range a.kids {
		it := &a.kids[i]
		w.indent(depth)
		switch it.kind {
		case kArray:
			w.buf = append(w.buf, '-', ' ')
			w.writeArray("", false, it, depth, true)
		case kObject:
			if len(it.kids) == 0 {
				w.buf = append(w.buf, '-', '\n')
				continue
			}
			w.buf = append(w.buf, '-', ' ')
			// The first field goes on the hyphen line; its children and the
			// other fields sit at depth+1 (tabular rows at depth+2).
			w.writeMember(it, &it.kids[0], depth+1, true, "", w.cfg.flattenDepth)
			for j := 1; j < len(it.kids); j++ {
				w.writeMember(it, &it.kids[j], depth+1, false, "", w.cfg.flattenDepth)
			}
		default:
			w.buf = append(w.buf, '-', ' ')
			w.writePrimitive(it, w.delim)
			w.nl()
		}
	}
}

// writePrimitive writes a primitive value with delimiter-aware quoting.
func (w *writer) writePrimitive(v *node, delim byte) {
	switch v.kind {
	case kNull:
		w.buf = append(w.buf, "null"...)
	case kBool:
		if v.bits != 0 {
			w.buf = append(w.buf, "true"...)
		} else {
			w.buf = append(w.buf, "false"...)
		}
	case kNum:
		w.buf = append(w.buf, v.s...)
	case kInt:
		w.buf = strconv.AppendInt(w.buf, int64(v.bits), 10)
	case kUint:
		w.buf = strconv.AppendUint(w.buf, v.bits, 10)
	case kFloat:
		bs := 64
		if v.flags&flagF32 != 0 {
			bs = 32
		}
		w.buf = appendFloat(w.buf, v.float(), bs)
	case kString:
		w.writeString(v.s, delim)
	}
}

// quoteTables classify bytes for §7.2, one table per delimiter: 1 forces
// quoting anywhere in a string (controls, : " \ [ ] { } and the
// delimiter), 2 marks a non-ASCII byte that needs a closer look.
var quoteTables = func() (t [3][256]uint8) {
	for k, delim := range []byte{',', '\t', '|'} {
		for c := 0; c < 0x20; c++ {
			t[k][c] = 1
		}
		for _, c := range []byte{':', '"', '\\', '[', ']', '{', '}', delim} {
			t[k][c] = 1
		}
		for c := 0x80; c < 0x100; c++ {
			t[k][c] = 2
		}
	}
	return t
}()

func quoteTable(delim byte) *[256]uint8 {
	switch delim {
	case '\t':
		return &quoteTables[1]
	case '|':
		return &quoteTables[2]
	}
	return &quoteTables[0]
}

func (w *writer) writeString(s string, delim byte) {
	w.buf = appendString(w.buf, s, delim)
}

// appendString appends s, quoted only when §7.2 requires it.
func appendString(b []byte, s string, delim byte) []byte {
	if needsQuote(s, delim) {
		return appendQuoted(b, s)
	}
	return append(b, s...)
}

// needsQuote implements §7.2.
func needsQuote(s string, delim byte) bool {
	if s == "" {
		return true
	}
	t := quoteTable(delim)
	high := false
	for i := 0; i < len(s); i++ {
		if x := t[s[i]]; x != 0 {
			if x == 1 {
				return true
			}
			high = true
		}
	}
	switch s[0] {
	case '-', ' ':
		return true
	case 't':
		if s == "true" {
			return true
		}
	case 'f':
		if s == "false" {
			return true
		}
	case 'n':
		if s == "null" {
			return true
		}
	}
	if s[len(s)-1] == ' ' {
		return true
	}
	if c := s[0]; (c >= '0' && c <= '9') && isNumericLike(s) {
		return true
	}
	if high {
		if !utf8.ValidString(s) {
			return true
		}
		r, _ := utf8.DecodeRuneInString(s)
		if isTrimSpace(r) {
			return true
		}
		r, _ = utf8.DecodeLastRuneInString(s)
		if isTrimSpace(r) {
			return true
		}
	}
	return false
}

func isTrimSpace(r rune) bool { return unicode.IsSpace(r) || r == 0xFEFF }

const hexDigits = "0123456789abcdef"

// writeQuoted writes s as a quoted string with §7.1 escapes. Invalid UTF-8
// is replaced by U+FFFD, as encoding/json does.
func (w *writer) writeQuoted(s string) { w.buf = appendQuoted(w.buf, s) }

func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			b = appendEscape(b, c)
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendEscape writes the escape of an ASCII byte that cannot appear as itself in a
// quoted string: TOON and JSON escape these alike.
func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(b, '\\', c)
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	}
	return append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}
