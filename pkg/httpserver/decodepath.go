package httpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// unknownFieldError is the 400 of an unknown field: named by its path
// (document.chunks[0].txet) when it is nested, with the fields of the object it
// is in.
func unknownFieldError(name string, v any, data []byte) error {
	path, in := unknownFieldPath(data, reflect.TypeOf(v), name)
	if path == "" || path == name {
		detail := fmt.Sprintf("unknown field %q; remove it or correct its spelling", name)
		if known := jsonFields(v); len(known) > 0 {
			detail += " (the top-level fields are " + strings.Join(known, ", ") + ")"
		}
		return BadRequest(name, detail)
	}
	parent := strings.TrimSuffix(path, "."+name)
	detail := fmt.Sprintf("unknown field %q in %s; remove it or correct its spelling", name, parent)
	if known := structFieldsOf(in); len(known) > 0 {
		detail += " (the fields there are " + strings.Join(known, ", ") + ")"
	}
	return BadRequest(path, detail)
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// unknownFieldPath walks data in document order along type t, as encoding/json
// decodes it, and returns the path of the first key named name that is not a
// field of the struct it is in, with that struct's type.
func unknownFieldPath(data []byte, t reflect.Type, name string) (string, reflect.Type) {
	w := pathWalker{dec: json.NewDecoder(bytes.NewReader(data)), name: name}
	w.walk(t, "")
	return w.path, w.in
}

type pathWalker struct {
	dec  *json.Decoder
	name string
	path string
	in   reflect.Type
}

// walk reads one value of type t (nil: any value) at path; it reports whether
// the unknown field was found.
func (w *pathWalker) walk(t reflect.Type, path string) bool {
	t = opaque(t)
	tok, err := w.dec.Token()
	if err != nil {
		return false
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return false
	}
	if d == '[' {
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			if w.walk(elem, fmt.Sprintf("%s[%d]", path, i)) {
				return true
			}
		}
		_, _ = w.dec.Token()
		return false
	}
	for w.dec.More() {
		kt, err := w.dec.Token()
		if err != nil {
			return false
		}
		key, _ := kt.(string)
		child := key
		if path != "" {
			child = path + "." + key
		}
		var ft reflect.Type
		known := true
		switch {
		case t != nil && t.Kind() == reflect.Struct:
			ft, known = fieldByJSONName(t, key)
		case t != nil && t.Kind() == reflect.Map:
			ft = t.Elem()
		}
		if !known && key == w.name {
			w.path, w.in = child, t
			return true
		}
		if w.walk(ft, child) {
			return true
		}
	}
	_, _ = w.dec.Token()
	return false
}

// opaque strips pointers and returns nil for a type whose content is not checked
// against fields (an interface, json.RawMessage, a json.Unmarshaler).
func opaque(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil
	}
	return t
}

// fieldByJSONName finds the field key decodes into, as encoding/json does: the
// exact JSON name first, then a case-insensitive match; promoted fields included.
func fieldByJSONName(t reflect.Type, key string) (reflect.Type, bool) {
	_, ft, ok := jsonFieldByName(t, key)
	return ft, ok
}

// jsonFieldByName is fieldByJSONName with the JSON name of the field found.
func jsonFieldByName(t reflect.Type, key string) (string, reflect.Type, bool) {
	fields := jsonFieldsOf(t)
	for _, f := range fields {
		if f.name == key {
			return f.name, f.typ, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.name, key) {
			return f.name, f.typ, true
		}
	}
	return "", nil, false
}

// structFieldsOf lists the JSON names of struct type t's fields (nil for others).
func structFieldsOf(t reflect.Type) []string {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return structFields(t)
}
