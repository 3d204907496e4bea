package toon

import (
	"fmt"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// SyntaxError describes malformed TOON input. Line and Col are 1-based; Col
// is 0 when the error concerns the whole line.
type SyntaxError struct {
	Line int
	Col  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("toon: line %d, column %d: %s", e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("toon: line %d: %s", e.Line, e.Msg)
}

// maxNesting bounds the nesting of parsed documents (TOON and JSON). Every
// level of a TOON document adds indentation to each line below it, so deep
// nesting makes documents grow quadratically; the bound keeps hostile input
// from exhausting memory or the stack.
const maxNesting = 1000

// maxEncodeNesting bounds the nesting of Go values given to Marshal; past it
// the value is most likely cyclic.
const maxEncodeNesting = 10000

type line struct {
	text   string // content after the indentation
	num    int32  // 1-based line number
	depth  int32
	indent int32 // leading spaces
	blank  bool
}

type parser struct {
	cfg   *config
	lines []line
	pos   int
	a     *arena
	nest  int
}

// header is a parsed array header such as key[3|]{a|b}: x.
type header struct {
	key       string
	keyQuoted bool
	hasKey    bool
	n         int
	delim     byte
	fields    []node // field names as nodes (key set, flags for quoting)
	hasFields bool
	inline    string // text after the colon, trimmed
	inlineCol int    // 0-based offset of inline within the line text
	dupFields bool   // lenient mode saw a repeated field name
}

func (p *parser) errf(ln *line, col int, format string, args ...any) error {
	if col > 0 {
		col += int(ln.indent)
	}
	return &SyntaxError{Line: int(ln.num), Col: col, Msg: fmt.Sprintf(format, args...)}
}

// bytesToString views data as a string without copying. Trees built from it
// alias data; anything handed to the caller is cloned first.
func bytesToString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b)) //nolint:gosec // G103: a zero-copy view, as documented above; Unmarshal does not keep it
}

// scanLines splits the document into lines and checks indentation.
func (p *parser) scanLines(s string) error {
	p.lines = p.lines[:0]
	num := int32(0)
	for len(s) > 0 || num == 0 {
		num++
		var l string
		if i := indexByte(s, '\n'); i >= 0 {
			l, s = s[:i], s[i+1:]
		} else {
			l, s = s, ""
		}
		if len(l) > 0 && l[len(l)-1] == '\r' {
			l = l[:len(l)-1]
		}
		sp := 0
		for sp < len(l) && l[sp] == ' ' {
			sp++
		}
		ln := line{num: num, indent: int32(sp)}
		rest := l[sp:]
		blank := true
		for i := 0; i < len(rest); i++ {
			if rest[i] != ' ' && rest[i] != '\t' {
				blank = false
				break
			}
		}
		if blank {
			ln.blank = true
			p.lines = append(p.lines, ln)
			continue
		}
		if rest[0] == '\t' {
			if p.cfg.strict {
				return &SyntaxError{Line: int(num), Col: sp + 1, Msg: "tab character used for indentation; indent with spaces"}
			}
			// Lenient: a tab in the indentation counts as one indentation unit.
			for len(rest) > 0 && (rest[0] == '\t' || rest[0] == ' ') {
				if rest[0] == '\t' {
					sp += p.cfg.indent
				} else {
					sp++
				}
				rest = rest[1:]
			}
			ln.indent = int32(sp)
		}
		if sp%p.cfg.indent != 0 && p.cfg.strict {
			return &SyntaxError{Line: int(num), Col: 1, Msg: fmt.Sprintf("indentation of %d spaces is not a multiple of the indent size %d", sp, p.cfg.indent)}
		}
		ln.depth = int32(sp / p.cfg.indent)
		ln.text = rest
		p.lines = append(p.lines, ln)
		if len(s) == 0 {
			break
		}
	}
	return nil
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// nextContent returns the index of the next non-blank line at or after pos
// and whether blank lines were skipped on the way.
func (p *parser) nextContent() (int, int) {
	firstBlank := -1
	i := p.pos
	for i < len(p.lines) && p.lines[i].blank {
		if firstBlank < 0 {
			firstBlank = i
		}
		i++
	}
	return i, firstBlank
}

// parseDocument parses a whole document into a tree (§5 root forms).
func (p *parser) parseDocument(s string) (node, error) {
	if !utf8.ValidString(s) {
		return node{}, invalidUTF8(s)
	}
	if err := p.scanLines(s); err != nil {
		return node{}, err
	}
	p.pos = 0
	i, _ := p.nextContent()
	if i >= len(p.lines) {
		return node{kind: kObject, kids: []node{}}, nil
	}
	first := &p.lines[i]
	if first.depth != 0 {
		return node{}, p.errf(first, 1, "unexpected indentation at the start of the document")
	}
	nonBlank := 0
	for j := i; j < len(p.lines); j++ {
		if !p.lines[j].blank {
			nonBlank++
		}
	}
	text := first.text
	var root node
	var err error
	switch {
	case text[0] == '[' && isHeaderStart(text):
		h, ok, herr := p.parseHeader(first, text, 0, true)
		if herr != nil {
			return node{}, herr
		}
		if !ok {
			return node{}, p.errf(first, 1, "root array header is malformed")
		}
		p.pos = i + 1
		root, err = p.parseArray(&h, first, 1)
	case nonBlank == 1 && trimSpace(text) == "[]":
		p.pos = i + 1
		root = node{kind: kArray, kids: []node{}, line: first.num}
	case nonBlank == 1 && !p.isKeyLine(text):
		root, err = p.parsePrimitive(trimSpace(text), first, 0)
		p.pos = i + 1
	default:
		if p.cfg.strict && !p.isKeyLine(text) && indexByte(text, '[') < 0 {
			return node{}, p.errf(first, 1, "a document with several lines must be an object or an array; line is neither a key-value pair nor an array header")
		}
		root, err = p.parseObject(0)
	}
	if err != nil {
		return node{}, err
	}
	if j, _ := p.nextContent(); j < len(p.lines) {
		ln := &p.lines[j]
		if ln.depth > 0 {
			return node{}, p.errf(ln, 1, "unexpected indentation")
		}
		return node{}, p.errf(ln, 1, "unexpected content after the root value")
	}
	if p.cfg.expandPaths {
		if err := p.expand(&root); err != nil {
			return node{}, err
		}
	}
	return root, nil
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return s[i:j]
}

// trimCell trims spaces, and tabs unless tab is the active delimiter.
func trimCell(s string, delim byte) string {
	if delim == '\t' {
		i, j := 0, len(s)
		for i < j && s[i] == ' ' {
			i++
		}
		for j > i && s[j-1] == ' ' {
			j--
		}
		return s[i:j]
	}
	return trimSpace(s)
}

// isHeaderStart reports whether a keyless line starts with a well-formed
// bracket segment "[digits" so that it is treated as an array header.
func isHeaderStart(text string) bool {
	return len(text) > 1 && text[1] >= '0' && text[1] <= '9' && indexByte(text, ':') > 0
}

// isKeyLine reports whether text is a key-value line or keyed header:
// a quoted key followed by ':' or '[', or an unquoted colon.
func (p *parser) isKeyLine(text string) bool {
	if text[0] == '"' {
		end := quotedEnd(text, 0)
		if end < 0 || end+1 >= len(text) {
			return false
		}
		rest := text[end+1:]
		i := 0
		for i < len(rest) && rest[i] == ' ' {
			i++
		}
		return i < len(rest) && (rest[i] == ':' || rest[i] == '[')
	}
	return indexByte(text, ':') >= 0
}

// quotedEnd returns the index of the closing quote of the string starting
// at text[start] == '"', or -1 when it is unterminated.
func quotedEnd(text string, start int) int {
	for i := start + 1; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return -1
}

// parseObject parses the fields of an object at depth d.
func (p *parser) parseObject(d int) (node, error) {
	if p.nest++; p.nest > maxNesting {
		return node{}, &SyntaxError{Line: int(p.lines[min(p.pos, len(p.lines)-1)].num), Msg: fmt.Sprintf("nesting deeper than %d levels", maxNesting)}
	}
	defer func() { p.nest-- }()
	mark := len(p.a.stack)
	line0 := int32(0)
	if p.pos < len(p.lines) {
		line0 = p.lines[p.pos].num
	}
	if err := p.parseFields(d, mark); err != nil {
		p.a.stack = p.a.stack[:mark]
		return node{}, err
	}
	return node{kind: kObject, kids: p.a.popTo(mark), line: line0}, nil
}

// parseFields reads field lines at depth d and pushes them on the stack
// above mark, checking duplicates against the members already there.
func (p *parser) parseFields(d, mark int) error {
	var index map[string]int // built for large objects to keep duplicate checks linear
	for {
		i, _ := p.nextContent()
		if i >= len(p.lines) {
			return nil
		}
		ln := &p.lines[i]
		if int(ln.depth) < d {
			return nil
		}
		if int(ln.depth) > d {
			return p.errf(ln, 1, "unexpected indentation (depth %d, expected %d)", ln.depth, d)
		}
		if isListItem(ln.text) {
			return p.errf(ln, 1, "list item %q outside of an array", ln.text)
		}
		p.pos = i + 1
		m, err := p.parseField(ln, ln.text, 0, d)
		if err != nil {
			return err
		}
		if index == nil && len(p.a.stack)-mark >= 32 {
			index = make(map[string]int, 64)
			for j, x := range p.a.stack[mark:] {
				index[x.key] = j
			}
		}
		if err := p.addMember(mark, m, ln, index); err != nil {
			return err
		}
	}
}

func (p *parser) addMember(mark int, m node, ln *line, index map[string]int) error {
	members := p.a.stack[mark:]
	dup := -1
	if index != nil {
		if j, ok := index[m.key]; ok {
			dup = j
		} else {
			index[m.key] = len(members)
		}
	} else {
		for j := range members {
			if members[j].key == m.key {
				dup = j
				break
			}
		}
	}
	if dup >= 0 {
		if p.cfg.strict {
			return p.errf(ln, 1, "duplicate key %q in object (first defined on line %d)", m.key, members[dup].line)
		}
		members[dup] = m // last write wins
		return nil
	}
	p.a.push(m)
	return nil
}

func isListItem(text string) bool {
	return text[0] == '-' && (len(text) == 1 || text[1] == ' ')
}

// parseField parses "key: value", "key:" or a keyed array header found in
// text (which starts at byte offset off of the line), for an object whose
// fields sit at depth d.
func (p *parser) parseField(ln *line, text string, off, d int) (node, error) {
	var key string
	quoted := false
	var rest string // after the key
	restOff := 0
	if text[0] == '"' {
		k, end, err := p.parseQuoted(ln, text, 0, off)
		if err != nil {
			return node{}, err
		}
		key, quoted = k, true
		rest = text[end+1:]
		restOff = end + 1
		if len(rest) > 0 && rest[0] == '[' {
			h, ok, err := p.parseHeader(ln, rest, off+restOff, false)
			if err != nil {
				return node{}, err
			}
			if ok {
				h.key, h.keyQuoted, h.hasKey = key, true, true
				return p.fieldArray(&h, ln, d)
			}
			return node{}, p.errf(ln, off+restOff+1, "malformed array header after key %q", key)
		}
		j := 0
		for j < len(rest) && rest[j] == ' ' {
			j++
		}
		if j >= len(rest) || rest[j] != ':' {
			return node{}, p.errf(ln, off+restOff+1, "missing colon after key %q", key)
		}
		rest = rest[j+1:]
		restOff += j + 1
	} else {
		colon := indexByte(text, ':')
		br := indexByte(text, '[')
		if br >= 0 && (colon < 0 || br < colon) {
			h, ok, err := p.parseHeader(ln, text[br:], off+br, false)
			if err != nil && p.cfg.strict {
				return node{}, err
			}
			if ok && err == nil {
				k := trimSpace(text[:br])
				if k == "" {
					return node{}, p.errf(ln, off+1, "array header without a key inside an object")
				}
				h.key, h.hasKey = k, true
				return p.fieldArray(&h, ln, d)
			}
			// Lenient fall-through: the whole prefix is a literal key.
		}
		if colon < 0 {
			return node{}, p.errf(ln, off+len(text)+1, "missing colon after key %q", trimSpace(text))
		}
		key = trimSpace(text[:colon])
		if key == "" {
			return node{}, p.errf(ln, off+1, "empty key before colon; quote it as \"\" if intended")
		}
		rest = text[colon+1:]
		restOff = colon + 1
	}
	var flags uint8
	if quoted {
		flags = flagKeyQuoted
	}
	val := trimSpace(rest)
	if val == "" {
		// Nested object (children at d+1) or empty object.
		i, _ := p.nextContent()
		var obj node
		if i < len(p.lines) && int(p.lines[i].depth) > d {
			var err error
			obj, err = p.parseObject(d + 1)
			if err != nil {
				return node{}, err
			}
		} else {
			obj = node{kind: kObject, kids: []node{}}
		}
		obj.key, obj.flags, obj.line = key, flags, ln.num
		return obj, nil
	}
	if val == "[]" {
		return node{kind: kArray, kids: []node{}, key: key, flags: flags, line: ln.num}, nil
	}
	lead := 0
	for lead < len(rest) && (rest[lead] == ' ' || rest[lead] == '\t') {
		lead++
	}
	v, err := p.parsePrimitive(val, ln, off+restOff+lead)
	if err != nil {
		return node{}, err
	}
	v.key, v.flags = key, v.flags|flags
	return v, nil
}

func (p *parser) fieldArray(h *header, ln *line, d int) (node, error) {
	arr, err := p.parseArray(h, ln, d+1)
	if err != nil {
		return node{}, err
	}
	arr.key = h.key
	if h.keyQuoted {
		arr.flags |= flagKeyQuoted
	}
	return arr, nil
}

// parseHeader parses a bracket segment starting at text[0] == '[' (text
// begins at byte offset off of the line). ok is false when the text is not
// an array header; err is set when it looks like one but is malformed.
func (p *parser) parseHeader(ln *line, text string, off int, keyless bool) (h header, ok bool, err error) {
	i := 1
	ds := i
	for i < len(text) && text[i] >= '0' && text[i] <= '9' {
		i++
	}
	digits := text[ds:i]
	h.delim = ','
	if i < len(text) && (text[i] == '\t' || text[i] == '|') {
		h.delim = text[i]
		i++
	}
	if digits == "" || i >= len(text) || text[i] != ']' {
		end := indexByte(text, ']')
		if end < 0 {
			end = len(text)
		} else {
			end++
		}
		return h, false, p.errf(ln, off+1, "invalid array length %q: use a non-negative integer such as [3]", text[:end])
	}
	if len(digits) > 1 && digits[0] == '0' {
		return h, false, p.errf(ln, off+2, "array length %q has leading zeros", digits)
	}
	n, perr := strconv.Atoi(digits)
	if perr != nil || n > 1<<31 {
		return h, false, p.errf(ln, off+2, "array length %s is too large", digits)
	}
	h.n = n
	i++ // past ']'
	if i < len(text) && text[i] == '{' {
		h.hasFields = true
		fs := i + 1
		j := fs
		for j < len(text) && text[j] != '}' {
			if text[j] == '"' {
				e := quotedEnd(text, j)
				if e < 0 {
					return h, false, p.errf(ln, off+j+1, "unterminated string in field list")
				}
				j = e
			}
			j++
		}
		if j >= len(text) {
			return h, false, p.errf(ln, off+i+1, "field list is not closed with '}'")
		}
		if err := p.parseFieldNames(ln, &h, text[fs:j], off+fs); err != nil {
			return h, false, err
		}
		i = j + 1
	}
	if i >= len(text) || text[i] != ':' {
		if i >= len(text) {
			return h, false, p.errf(ln, off+i+1, "missing colon after array header")
		}
		return h, false, p.errf(ln, off+i+1, "unexpected %q after array header; the header must end with ':'", text[i:])
	}
	rest := text[i+1:]
	lead := 0
	for lead < len(rest) && rest[lead] == ' ' {
		lead++
	}
	h.inline = trimCell(rest, h.delim)
	h.inlineCol = off + i + 1 + lead
	return h, true, nil
}

func (p *parser) parseFieldNames(ln *line, h *header, s string, off int) error {
	mark := len(p.a.stack)
	start := 0
	for {
		j := start
		for j < len(s) && s[j] != h.delim {
			if s[j] == '"' {
				if e := quotedEnd(s, j); e >= 0 {
					j = e
				}
			}
			j++
		}
		tok := trimCell(s[start:j], h.delim)
		var f node
		if len(tok) > 0 && tok[0] == '"' {
			k, end, err := p.parseQuoted(ln, tok, 0, off+start)
			if err != nil {
				p.a.stack = p.a.stack[:mark]
				return err
			}
			if end != len(tok)-1 {
				p.a.stack = p.a.stack[:mark]
				return p.errf(ln, off+start+end+2, "unexpected text after quoted field name")
			}
			f = node{key: k, flags: flagKeyQuoted}
		} else {
			if tok == "" {
				p.a.stack = p.a.stack[:mark]
				return p.errf(ln, off+start+1, "empty field name in tabular header")
			}
			if p.cfg.strict {
				for k := 0; k < len(tok); k++ {
					if c := tok[k]; (c == ',' || c == '|' || c == '\t') && c != h.delim {
						p.a.stack = p.a.stack[:mark]
						return p.errf(ln, off+start+k+1, "field list uses delimiter %q but the bracket declares %q", c, h.delim)
					}
				}
			}
			f = node{key: tok}
		}
		for q := mark; q < len(p.a.stack); q++ {
			if p.a.stack[q].key == f.key {
				if p.cfg.strict {
					p.a.stack = p.a.stack[:mark]
					return p.errf(ln, off+start+1, "duplicate field name %q in tabular header", f.key)
				}
				h.dupFields = true
			}
		}
		p.a.push(f)
		if j >= len(s) {
			break
		}
		start = j + 1
	}
	h.fields = p.a.popTo(mark)
	return nil
}

// parseArray parses the body of an array whose header is h; items, rows or
// nested content sit at depth itemDepth.
func (p *parser) parseArray(h *header, ln *line, itemDepth int) (node, error) {
	if p.nest++; p.nest > maxNesting {
		return node{}, p.errf(ln, 0, "nesting deeper than %d levels", maxNesting)
	}
	defer func() { p.nest-- }()
	switch {
	case h.hasFields:
		if h.inline != "" {
			return node{}, p.errf(ln, h.inlineCol+1, "tabular header must not be followed by values on the same line")
		}
		return p.parseRows(h, ln, itemDepth)
	case h.inline != "":
		return p.parseInline(h, ln)
	case h.n == 0:
		return node{kind: kArray, kids: []node{}, line: ln.num}, nil
	}
	return p.parseItems(h, ln, itemDepth)
}

func (p *parser) parseInline(h *header, ln *line) (node, error) {
	// A value needs at least one byte or delimiter, which bounds the
	// preallocation for absurd declared lengths.
	capVals := min(h.n, len(h.inline)+1)
	vals, got, err := p.splitInto(ln, h.inline, h.inlineCol, h.delim, p.a.alloc(capVals), nil)
	if err != nil {
		return node{}, err
	}
	if got != h.n && p.cfg.strict {
		return node{}, p.errf(ln, 0, "inline array has %d values, header declares %d", got, h.n)
	}
	if got == 0 {
		vals = []node{}
	}
	return node{kind: kArray, kids: vals[:got], line: ln.num}, nil
}

// splitInto splits text on the active delimiter outside quotes and stores
// one primitive per cell into dst, growing it when there are more cells
// than its length. With fields, cell k gets the key of field k. It returns
// dst and the number of cells.
func (p *parser) splitInto(ln *line, text string, col int, delim byte, dst, fields []node) ([]node, int, error) {
	k := 0
	start := 0
	for {
		j := start
		inQ := false
		for j < len(text) {
			c := text[j]
			if inQ {
				if c == '\\' {
					j += 2
					continue
				}
				if c == '"' {
					inQ = false
				}
			} else if c == '"' {
				inQ = true
			} else if c == delim {
				break
			}
			j++
		}
		if j > len(text) {
			j = len(text)
		}
		raw := text[start:j]
		tok := trimCell(raw, delim)
		lead := 0
		for lead < len(raw) && raw[lead] == ' ' {
			lead++
		}
		v, err := p.parsePrimitive(tok, ln, col+start+lead)
		if err != nil {
			return dst, k, err
		}
		if k < len(fields) {
			v.key = fields[k].key
			v.flags |= fields[k].flags
		}
		if k < len(dst) {
			dst[k] = v
		} else {
			dst = append(dst, v)
		}
		k++
		if j >= len(text) {
			return dst, k, nil
		}
		start = j + 1
	}
}

// isRow applies the §9.3 disambiguation: a line is a row unless it has an
// unquoted colon before the first unquoted delimiter.
func isRow(text string, delim byte) bool {
	inQ := false
	for j := 0; j < len(text); j++ {
		c := text[j]
		if inQ {
			switch c {
			case '\\':
				j++
			case '"':
				inQ = false
			}
			continue
		}
		switch c {
		case '"':
			inQ = true
		case delim:
			return true
		case ':':
			return false
		}
	}
	return true
}

func (p *parser) parseRows(h *header, ln *line, rowDepth int) (node, error) {
	nf := len(h.fields)
	// Rows go straight into an arena slice sized by the declared length,
	// bounded by the lines left so that a huge [N] cannot exhaust memory.
	capRows := min(h.n, len(p.lines)-p.pos)
	rows := p.a.alloc(capRows)
	count := 0
	for {
		i, blank := p.nextContent()
		if i >= len(p.lines) {
			break
		}
		r := &p.lines[i]
		if int(r.depth) != rowDepth || !isRow(r.text, h.delim) {
			break
		}
		if blank >= 0 && p.cfg.strict && count > 0 {
			return node{}, p.errf(&p.lines[blank], 0, "blank line inside tabular array %q (header on line %d)", h.key, ln.num)
		}
		p.pos = i + 1
		obj, got, err := p.splitInto(r, r.text, 0, h.delim, p.a.alloc(nf), h.fields)
		if err != nil {
			return node{}, err
		}
		if got != nf {
			if p.cfg.strict {
				return node{}, p.errf(r, 0, "tabular row has %d values, header declares %d", got, nf)
			}
			obj = obj[:min(got, nf)]
		}
		if h.dupFields {
			obj = dedupeLastWins(obj)
		}
		row := node{kind: kObject, kids: obj, line: r.num}
		if count < len(rows) {
			rows[count] = row
		} else {
			rows = append(rows, row)
		}
		count++
	}
	if count != h.n && p.cfg.strict {
		return node{}, p.errf(ln, 0, "tabular array has %d rows, header declares %d", count, h.n)
	}
	if count == 0 {
		rows = []node{}
	}
	return node{kind: kArray, kids: rows[:count], line: ln.num}, nil
}

func (p *parser) parseItems(h *header, ln *line, itemDepth int) (node, error) {
	mark := len(p.a.stack)
	fail := func(err error) (node, error) {
		p.a.stack = p.a.stack[:mark]
		return node{}, err
	}
	for {
		i, blank := p.nextContent()
		if i >= len(p.lines) {
			break
		}
		it := &p.lines[i]
		if int(it.depth) != itemDepth || !isListItem(it.text) {
			break
		}
		if blank >= 0 && p.cfg.strict && len(p.a.stack) > mark {
			return fail(p.errf(&p.lines[blank], 0, "blank line inside list array (header on line %d)", ln.num))
		}
		p.pos = i + 1
		v, err := p.parseListItem(it, itemDepth)
		if err != nil {
			return fail(err)
		}
		p.a.push(v)
	}
	got := len(p.a.stack) - mark
	if got != h.n && p.cfg.strict {
		return fail(p.errf(ln, 0, "list array has %d items, header declares %d", got, h.n))
	}
	return node{kind: kArray, kids: p.a.popTo(mark), line: ln.num}, nil
}

// parseListItem parses one "- ..." line at depth d and what belongs to it.
func (p *parser) parseListItem(ln *line, d int) (node, error) {
	if len(ln.text) == 1 {
		return node{kind: kObject, kids: []node{}, line: ln.num}, nil
	}
	off := 2
	for off < len(ln.text) && ln.text[off] == ' ' {
		off++
	}
	rest := ln.text[off:]
	if rest == "" {
		return node{kind: kObject, kids: []node{}, line: ln.num}, nil
	}
	if rest[0] == '[' && isHeaderStart(rest) {
		h, ok, err := p.parseHeader(ln, rest, off, true)
		if err != nil && (p.cfg.strict || ok) {
			return node{}, err
		}
		if ok {
			return p.parseArray(&h, ln, d+1)
		}
	}
	if !p.isKeyLine(rest) {
		return p.parsePrimitive(trimSpace(rest), ln, off)
	}
	// An object whose first field is on the hyphen line; its fields sit at
	// depth d+1.
	if p.nest++; p.nest > maxNesting {
		return node{}, p.errf(ln, 0, "nesting deeper than %d levels", maxNesting)
	}
	defer func() { p.nest-- }()
	mark := len(p.a.stack)
	first, err := p.parseField(ln, rest, off, d+1)
	if err != nil {
		p.a.stack = p.a.stack[:mark]
		return node{}, err
	}
	p.a.push(first)
	if err := p.parseFields(d+1, mark); err != nil {
		p.a.stack = p.a.stack[:mark]
		return node{}, err
	}
	return node{kind: kObject, kids: p.a.popTo(mark), line: ln.num}, nil
}

// parsePrimitive types one token (§4): quoted string, true/false/null,
// number, or unquoted string. col is the token's 0-based offset in ln.text.
func (p *parser) parsePrimitive(tok string, ln *line, col int) (node, error) {
	if tok == "" {
		return node{kind: kString, line: ln.num}, nil
	}
	switch tok[0] {
	case '"':
		s, end, err := p.parseQuoted(ln, tok, 0, col)
		if err != nil {
			return node{}, err
		}
		if end != len(tok)-1 {
			return node{}, p.errf(ln, col+end+2, "unexpected text %q after closing quote", tok[end+1:])
		}
		return node{kind: kString, s: s, line: ln.num}, nil
	case 't':
		if tok == "true" {
			return node{kind: kBool, bits: 1, line: ln.num}, nil
		}
	case 'f':
		if tok == "false" {
			return node{kind: kBool, line: ln.num}, nil
		}
	case 'n':
		if tok == "null" {
			return node{kind: kNull, line: ln.num}, nil
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if ok, lz := scanNumber(tok); ok && !lz {
			var s string
			s, p.a.buf = canonicalNumber(tok, p.a.buf)
			return node{kind: kNum, s: s, line: ln.num}, nil
		}
	}
	return node{kind: kString, s: tok, line: ln.num}, nil
}

// parseQuoted unescapes the quoted string starting at text[start] == '"'
// and returns it with the index of the closing quote (§7.1).
func (p *parser) parseQuoted(ln *line, text string, start, col int) (string, int, error) {
	i := start + 1
	for i < len(text) {
		c := text[i]
		if c == '"' {
			return text[start+1 : i], i, nil
		}
		if c == '\\' {
			break
		}
		i++
	}
	if i >= len(text) {
		return "", 0, p.errf(ln, col+start+1, "unterminated string")
	}
	buf := append(p.a.buf[:0], text[start+1:i]...)
	for i < len(text) {
		c := text[i]
		switch c {
		case '"':
			p.a.buf = buf
			return string(buf), i, nil
		case '\\':
			if i+1 >= len(text) {
				return "", 0, p.errf(ln, col+i+1, "unterminated string")
			}
			e := text[i+1]
			switch e {
			case '\\', '"':
				buf = append(buf, e)
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				if i+6 > len(text) {
					return "", 0, p.errf(ln, col+i+1, "\\u escape needs four hex digits")
				}
				r := 0
				for k := 2; k < 6; k++ {
					h := hexVal(text[i+k])
					if h < 0 {
						return "", 0, p.errf(ln, col+i+1, "\\u escape needs four hex digits, got %q", text[i:i+6])
					}
					r = r<<4 | h
				}
				if r >= 0xD800 && r <= 0xDFFF {
					return "", 0, p.errf(ln, col+i+1, "\\u%04X is a surrogate code point; write the character as UTF-8", r)
				}
				buf = utf8.AppendRune(buf, rune(r))
				i += 6
				continue
			default:
				return "", 0, p.errf(ln, col+i+1, "invalid escape \\%c; only \\\\ \\\" \\n \\r \\t and \\uXXXX are allowed", e)
			}
			i += 2
			continue
		}
		buf = append(buf, c)
		i++
	}
	p.a.buf = buf
	return "", 0, p.errf(ln, col+start+1, "unterminated string")
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// dedupeLastWins keeps the first position and the last value of repeated
// keys (lenient mode only).
func dedupeLastWins(obj []node) []node {
	out := obj[:0]
	for _, m := range obj {
		if j := findMember(out, m.key); j >= 0 {
			out[j] = m
			continue
		}
		out = append(out, m)
	}
	return out
}

// invalidUTF8 locates the first invalid UTF-8 sequence in s.
func invalidUTF8(s string) error {
	line, col := 1, 1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf("invalid UTF-8 byte %#x; TOON documents are UTF-8", s[i])}
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return nil
}
