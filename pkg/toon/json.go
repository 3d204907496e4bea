package toon

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// FromJSON converts JSON text to TOON. Key order and number digits are
// preserved (numbers are only rewritten into canonical form, e.g. 1e6 →
// 1000000 and -0 → 0). Duplicate keys keep the last value at the position
// of the first, as JavaScript's JSON.parse does.
func FromJSON(data []byte, opts ...Option) ([]byte, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	a := getArena()
	defer putArena(a)
	jp := jsonParser{s: bytesToString(data), a: a}
	root, err := jp.parseDocument()
	if err != nil {
		return nil, err
	}
	w := writer{cfg: &cfg, buf: make([]byte, 0, len(data)/2+16)}
	w.encodeDocument(&root)
	return w.buf, nil
}

// ToJSON converts TOON text to compact JSON, preserving key order and the
// decoded numbers' digits (in canonical form).
func ToJSON(data []byte, opts ...Option) ([]byte, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	a := getArena()
	defer putArena(a)
	p := parser{cfg: &cfg, a: a, lines: a.lines[:0]}
	defer func() { a.lines = p.lines[:0] }()
	root, err := p.parseDocument(bytesToString(data))
	if err != nil {
		return nil, err
	}
	return appendJSON(make([]byte, 0, len(data)+len(data)/2+16), &root), nil
}

// JSONSyntaxError reports malformed JSON given to FromJSON.
type JSONSyntaxError struct {
	Offset int // byte offset of the problem
	Msg    string
}

func (e *JSONSyntaxError) Error() string {
	return fmt.Sprintf("toon: invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

type jsonParser struct {
	s    string
	i    int
	a    *arena
	nest int
}

func (p *jsonParser) errf(format string, args ...any) error {
	return &JSONSyntaxError{Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) parseDocument() (node, error) {
	p.ws()
	v, err := p.value()
	if err != nil {
		return node{}, err
	}
	p.ws()
	if p.i != len(p.s) {
		return node{}, p.errf("unexpected %q after the top-level value", p.s[p.i])
	}
	return v, nil
}

func (p *jsonParser) value() (node, error) {
	if p.i >= len(p.s) {
		return node{}, p.errf("unexpected end of input")
	}
	switch c := p.s[p.i]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		s, err := p.str()
		return node{kind: kString, s: s}, err
	case 't':
		return p.lit("true", node{kind: kBool, bits: 1})
	case 'f':
		return p.lit("false", node{kind: kBool})
	case 'n':
		return p.lit("null", node{kind: kNull})
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return p.number()
		}
		return node{}, p.errf("unexpected %q", c)
	}
}

func (p *jsonParser) lit(word string, n node) (node, error) {
	if len(p.s)-p.i >= len(word) && p.s[p.i:p.i+len(word)] == word {
		p.i += len(word)
		return n, nil
	}
	return node{}, p.errf("invalid literal, expected %s", word)
}

func (p *jsonParser) number() (node, error) {
	start := p.i
	i := p.i
	if p.s[i] == '-' {
		i++
	}
	if i >= len(p.s) || p.s[i] < '0' || p.s[i] > '9' {
		p.i = i
		return node{}, p.errf("invalid number")
	}
	if p.s[i] == '0' {
		i++
	} else {
		for i < len(p.s) && p.s[i] >= '0' && p.s[i] <= '9' {
			i++
		}
	}
	if i < len(p.s) && p.s[i] == '.' {
		i++
		fs := i
		for i < len(p.s) && p.s[i] >= '0' && p.s[i] <= '9' {
			i++
		}
		if i == fs {
			p.i = i
			return node{}, p.errf("invalid number: digits expected after '.'")
		}
	}
	if i < len(p.s) && (p.s[i] == 'e' || p.s[i] == 'E') {
		i++
		if i < len(p.s) && (p.s[i] == '+' || p.s[i] == '-') {
			i++
		}
		es := i
		for i < len(p.s) && p.s[i] >= '0' && p.s[i] <= '9' {
			i++
		}
		if i == es {
			p.i = i
			return node{}, p.errf("invalid number: digits expected in exponent")
		}
	}
	p.i = i
	var s string
	s, p.a.buf = canonicalNumber(p.s[start:i], p.a.buf)
	return node{kind: kNum, s: s}, nil
}

func (p *jsonParser) str() (string, error) {
	p.i++ // opening quote
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '"' {
			s := p.s[start:p.i]
			p.i++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.i++
	}
	buf := append(p.a.buf[:0], p.s[start:p.i]...)
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			p.a.buf = buf
			return string(buf), nil
		case c < 0x20:
			return "", p.errf("control character %#x in string; escape it", c)
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return "", p.errf("unterminated string")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return "", p.errf("invalid \\u escape")
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(utf8.RuneError)
					if p.i+1 < len(p.s) && p.s[p.i] == '\\' && p.s[p.i+1] == 'u' {
						save := p.i
						p.i += 2
						if lo, ok := p.hex4(); ok {
							if d := utf16.DecodeRune(r, lo); d != utf8.RuneError {
								r2 = d
							} else {
								p.i = save
							}
						} else {
							p.i = save
						}
					}
					r = r2
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return "", p.errf("invalid escape \\%c", e)
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.i++
		default:
			r, size := utf8.DecodeRuneInString(p.s[p.i:])
			if r == utf8.RuneError && size == 1 {
				buf = append(buf, "\uFFFD"...)
			} else {
				buf = append(buf, p.s[p.i:p.i+size]...)
			}
			p.i += size
		}
	}
	return "", p.errf("unterminated string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	r := 0
	for k := 0; k < 4; k++ {
		h := hexVal(p.s[p.i+k])
		if h < 0 {
			return 0, false
		}
		r = r<<4 | h
	}
	p.i += 4
	return rune(r), true
}

func (p *jsonParser) enter() error {
	if p.nest++; p.nest > maxNesting {
		return p.errf("nesting deeper than %d levels", maxNesting)
	}
	return nil
}

func (p *jsonParser) array() (node, error) {
	if err := p.enter(); err != nil {
		return node{}, err
	}
	defer func() { p.nest-- }()
	p.i++
	mark := len(p.a.stack)
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return node{kind: kArray, kids: []node{}}, nil
	}
	for {
		p.ws()
		v, err := p.value()
		if err != nil {
			p.a.stack = p.a.stack[:mark]
			return node{}, err
		}
		p.a.push(v)
		p.ws()
		if p.i >= len(p.s) {
			p.a.stack = p.a.stack[:mark]
			return node{}, p.errf("unexpected end of input in array")
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] == ']' {
			p.i++
			return node{kind: kArray, kids: p.a.popTo(mark)}, nil
		}
		p.a.stack = p.a.stack[:mark]
		return node{}, p.errf("expected ',' or ']' in array, got %q", p.s[p.i])
	}
}

func (p *jsonParser) object() (node, error) {
	if err := p.enter(); err != nil {
		return node{}, err
	}
	defer func() { p.nest-- }()
	p.i++
	mark := len(p.a.stack)
	fail := func(err error) (node, error) {
		p.a.stack = p.a.stack[:mark]
		return node{}, err
	}
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return node{kind: kObject, kids: []node{}}, nil
	}
	var index map[string]int
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return fail(p.errf("expected a string key in object"))
		}
		k, err := p.str()
		if err != nil {
			return fail(err)
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return fail(p.errf("expected ':' after object key"))
		}
		p.i++
		p.ws()
		v, err := p.value()
		if err != nil {
			return fail(err)
		}
		v.key = k
		// Duplicate keys: last value wins, first position kept.
		members := p.a.stack[mark:]
		dup := -1
		if index != nil {
			if j, ok := index[k]; ok {
				dup = j
			}
		} else {
			for j := range members {
				if members[j].key == k {
					dup = j
					break
				}
			}
			if len(members) >= 16 {
				index = make(map[string]int, 32)
				for j := range members {
					index[members[j].key] = j
				}
			}
		}
		if dup >= 0 {
			members[dup] = v
		} else {
			if index != nil {
				index[k] = len(members)
			}
			p.a.push(v)
		}
		p.ws()
		if p.i >= len(p.s) {
			return fail(p.errf("unexpected end of input in object"))
		}
		if p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.s[p.i] == '}' {
			p.i++
			return node{kind: kObject, kids: p.a.popTo(mark)}, nil
		}
		return fail(p.errf("expected ',' or '}' in object, got %q", p.s[p.i]))
	}
}

// appendJSON writes n as compact JSON.
func appendJSON(b []byte, n *node) []byte {
	switch n.kind {
	case kNull:
		return append(b, "null"...)
	case kBool:
		if n.bits != 0 {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case kNum:
		return append(b, n.s...)
	case kInt:
		return strconv.AppendInt(b, int64(n.bits), 10)
	case kUint:
		return strconv.AppendUint(b, n.bits, 10)
	case kFloat:
		bs := 64
		if n.flags&flagF32 != 0 {
			bs = 32
		}
		return appendFloat(b, n.float(), bs)
	case kString:
		return appendJSONString(b, n.s)
	case kArray:
		b = append(b, '[')
		for i := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSON(b, &n.kids[i])
		}
		return append(b, ']')
	case kObject:
		b = append(b, '{')
		for i := range n.kids {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, n.kids[i].key)
			b = append(b, ':')
			b = appendJSON(b, &n.kids[i])
		}
		return append(b, '}')
	}
	return b
}

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\uFFFD"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		b = appendEscape(b, c)
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
