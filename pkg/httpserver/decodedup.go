package httpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A JSON object that names a key twice is valid JSON (RFC 8259 §4 only says the
// names "SHOULD be unique"), and encoding/json keeps the last value silently: a
// client that sends {"url":"a","url":"b"} cannot tell which one was read. Every
// service refuses it instead, with a 400 naming the key's path.
//
// duplicateKeyError is called on a value encoding/json has already decoded, so
// data is valid JSON nested at most 10000 levels (the decoder's own limit). It
// scans data once, iteratively (no recursion, however deep the nesting), and
// builds a key's path only for the duplicate it reports, so its cost is linear
// in the size of the body.

// maxDupPath bounds the path shown in a problem: a key path in a deeply nested
// or very long key would otherwise fill the answer.
const maxDupPath = 200

// dupFrame is one open object or array in the scan.
type dupFrame struct {
	t      reflect.Type // the container's type (nil: any value, keys compared exactly)
	object bool
	index  int          // array: index of the current element
	key    string       // object: the current key as the path shows it
	next   reflect.Type // type of the current key's or element's value
	// The keys seen so far, as (id, key as sent) pairs: a list while the object
	// is small (most are), a map once it is not.
	list []string
	seen map[string]string
}

// smallObject is the number of keys looked up in a list before a map is built.
const smallObject = 8

// add records id (sent as key) and returns the key it was first sent as, if
// the object already has it.
func (f *dupFrame) add(id, key string) (string, bool) {
	if f.seen != nil {
		first, ok := f.seen[id]
		if !ok {
			f.seen[id] = key
		}
		return first, ok
	}
	for i := 0; i < len(f.list); i += 2 {
		if f.list[i] == id {
			return f.list[i+1], true
		}
	}
	f.list = append(f.list, id, key)
	if len(f.list) > 2*smallObject {
		f.seen = make(map[string]string, len(f.list))
		for i := 0; i < len(f.list); i += 2 {
			f.seen[f.list[i]] = f.list[i+1]
		}
	}
	return "", false
}

type dupScan struct {
	data   []byte
	stack  []dupFrame
	fields map[fieldKey]fieldRef // memo of struct field lookups in this body
}

type fieldKey struct {
	t   reflect.Type
	key string
}

type fieldRef struct {
	name string // the field's JSON name ("" for an unknown key)
	t    reflect.Type
}

// DuplicateKey returns a 400 [*Error] whose Field is the path of the first key
// given twice in one object of data (at any depth, in any element of an array)
// and whose Detail says so, or nil. Keys are compared exactly, after their
// escapes are decoded. data must be one valid JSON value (json.Valid): it is for
// bodies read by a decoder other than [DecodeJSON], which checks its own (the MCP
// SDK's JSON-RPC messages, pkg/mcpserver).
func DuplicateKey(data []byte) error {
	return duplicateKeyError(data, nil)
}

// duplicateKeyError returns a 400 naming the first key given twice in one object
// of data, or nil. In a struct, keys that encoding/json decodes into the same
// field (url and URL) count as the same key; elsewhere (maps, raw JSON kept for
// later) keys are compared exactly, after their escapes are decoded.
func duplicateKeyError(data []byte, v any) error {
	s := dupScan{data: data, fields: map[fieldKey]fieldRef{}}
	next := opaque(reflect.TypeOf(v))
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case ' ', '\t', '\r', '\n', ':':
			i++
		case ',':
			if len(s.stack) == 0 {
				return nil // not JSON decoded by encoding/json; nothing to add
			}
			if f := s.top(); !f.object {
				f.index++
			}
			i++
		case '{', '[':
			t := next
			if len(s.stack) > 0 {
				t = opaque(s.top().next)
			}
			s.push(t, c == '{')
			i++
		case '}', ']':
			if len(s.stack) == 0 {
				return nil
			}
			s.stack = s.stack[:len(s.stack)-1]
			i++
			if len(s.stack) == 0 {
				return nil // the end of the one value
			}
		case '"':
			end := stringEnd(data, i)
			if len(s.stack) > 0 && s.top().object && isKey(data, end) {
				if err := s.key(data[i:end]); err != nil {
					return err
				}
			}
			i = end
		default: // a number, true, false or null
			i = literalEnd(data, i)
		}
	}
	return nil
}

// push opens an object or array of type t, reusing the key list of the last
// frame closed at this depth.
func (s *dupScan) push(t reflect.Type, object bool) {
	var list []string
	if n := len(s.stack); n < cap(s.stack) {
		list = s.stack[:n+1][n].list[:0]
	}
	f := dupFrame{t: t, object: object, list: list}
	if !object {
		f.next = elemType(t)
	}
	s.stack = append(s.stack, f)
}

func (s *dupScan) top() *dupFrame { return &s.stack[len(s.stack)-1] }

// key records the object key raw (with its quotes) in the innermost object and
// returns the 400 when that object already has it.
func (s *dupScan) key(raw []byte) error {
	f := s.top()
	key := unquoteKey(raw)
	id, shown, next := key, key, reflect.Type(nil)
	switch {
	case f.t != nil && f.t.Kind() == reflect.Struct:
		ref := s.field(f.t, key)
		if ref.name != "" {
			id, shown, next = ref.name, ref.name, ref.t
		}
	case f.t != nil && f.t.Kind() == reflect.Map:
		next = f.t.Elem()
	}
	f.key, f.next = shown, next
	first, dup := f.add(id, key)
	if !dup {
		return nil
	}
	path := clipPath(s.path())
	detail := fmt.Sprintf("%s is given twice in one object; send it once", path)
	if first != key {
		detail = fmt.Sprintf("%s is given twice in one object (as %q and %q, which name the same field); send it once", path, first, key)
	}
	return BadRequest(path, detail)
}

// field resolves key in struct t as encoding/json does (fieldByJSONName),
// remembering the answer for the rest of the body.
func (s *dupScan) field(t reflect.Type, key string) fieldRef {
	k := fieldKey{t, key}
	if ref, ok := s.fields[k]; ok {
		return ref
	}
	ref := fieldRef{}
	if name, ft, ok := jsonFieldByName(t, key); ok {
		ref = fieldRef{name: name, t: ft}
	}
	s.fields[k] = ref
	return ref
}

// path is the path of the innermost object's current key: filters.tags,
// items[2].id.
func (s *dupScan) path() string {
	var b strings.Builder
	for i := range s.stack {
		f := &s.stack[i]
		if !f.object {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if f.key == "" {
			b.WriteString(`""`) // the empty key, visibly
			continue
		}
		b.WriteString(f.key)
	}
	return b.String()
}

// clipPath keeps the end of a long path (the key at fault), marking the cut.
func clipPath(p string) string {
	if len(p) <= maxDupPath {
		return p
	}
	cut := len(p) - maxDupPath
	for cut < len(p) && !utf8.RuneStart(p[cut]) {
		cut++
	}
	return "…" + p[cut:]
}

// stringEnd returns the index just after the JSON string starting at data[i].
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// literalEnd returns the index just after the number or literal at data[i].
func literalEnd(data []byte, i int) int {
	for ; i < len(data); i++ {
		switch data[i] {
		case ' ', '\t', '\r', '\n', ',', ']', '}':
			return i
		}
	}
	return i
}

// isKey reports whether the string ending before data[end] is an object key
// (followed by a colon).
func isKey(data []byte, end int) bool {
	for ; end < len(data); end++ {
		switch data[end] {
		case ' ', '\t', '\r', '\n':
			continue
		case ':':
			return true
		}
		return false
	}
	return false
}

// unquoteKey decodes a quoted JSON key as encoding/json does (escapes, and
// invalid UTF-8 replaced by U+FFFD); plain keys are only unquoted.
func unquoteKey(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return string(inner)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(inner) // cannot happen for a string encoding/json decoded
	}
	return s
}

// elemType is the type of an element of array or slice type t (nil otherwise).
func elemType(t reflect.Type) reflect.Type {
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		return t.Elem()
	}
	return nil
}
