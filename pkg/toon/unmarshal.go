package toon

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"time"
)

// Unmarshal parses the TOON document in data and stores the result in the
// value pointed to by v, following the same mapping as Marshal in reverse
// (and the rules of encoding/json: unknown keys are ignored, keys match
// field names exactly first and then case-insensitively, null leaves
// non-pointer values unchanged). Into an empty interface it stores
// map[string]any, []any, float64, string, bool or nil.
//
// Malformed input yields a *SyntaxError carrying the line (and column) and
// the rule that was broken; a value that does not fit the Go type yields an
// *UnmarshalTypeError naming the line.
func Unmarshal(data []byte, v any, opts ...Option) error {
	cfg, err := newConfig(opts)
	if err != nil {
		return err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	a := getArena()
	defer putArena(a)
	p := parser{cfg: &cfg, a: a, lines: a.lines[:0]}
	defer func() { a.lines = p.lines[:0] }()
	root, err := p.parseDocument(bytesToString(data))
	if err != nil {
		return err
	}
	return decodeValue(&root, rv.Elem())
}

// InvalidUnmarshalError reports a nil or non-pointer argument to Unmarshal.
type InvalidUnmarshalError struct {
	Type reflect.Type
}

func (e *InvalidUnmarshalError) Error() string {
	if e.Type == nil {
		return "toon: Unmarshal(nil)"
	}
	if e.Type.Kind() != reflect.Pointer {
		return "toon: Unmarshal(non-pointer " + e.Type.String() + ")"
	}
	return "toon: Unmarshal(nil " + e.Type.String() + ")"
}

// UnmarshalTypeError describes a TOON value that cannot be stored in a Go
// value of the target type.
type UnmarshalTypeError struct {
	Value string       // "string", "number 1.5", "array", ...
	Type  reflect.Type // target type
	Line  int          // line of the value in the document
	Field string       // dotted path of the field, when known
	Err   error        // underlying parse error, if any
}

func (e *UnmarshalTypeError) Error() string {
	where := ""
	if e.Field != "" {
		where = " into field " + e.Field
	}
	msg := fmt.Sprintf("toon: line %d: cannot unmarshal %s%s of type %s", e.Line, e.Value, where, e.Type)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *UnmarshalTypeError) Unwrap() error { return e.Err }

func typeErr(n *node, t reflect.Type, path string, err error) error {
	desc := kindName(n)
	switch n.kind {
	case kNull:
		desc = "null"
	case kBool:
		desc = "bool"
	case kString:
		desc = "string"
	case kNum:
		desc = "number " + n.s
	}
	return &UnmarshalTypeError{Value: desc, Type: t, Line: int(n.line), Field: path, Err: err}
}

// A Decoder reads a TOON document from an input stream. TOON documents are
// not self-delimiting, so Decode consumes the whole stream.
type Decoder struct {
	r    io.Reader
	opts []Option
	done bool
}

// NewDecoder returns a decoder reading from r with the given options.
func NewDecoder(r io.Reader, opts ...Option) *Decoder {
	return &Decoder{r: r, opts: opts}
}

// Decode reads the rest of the stream as one document and stores it in v.
// It returns io.EOF once the stream has been consumed.
func (d *Decoder) Decode(v any) error {
	if d.done {
		return io.EOF
	}
	d.done = true
	data, err := io.ReadAll(d.r)
	if err != nil {
		return fmt.Errorf("toon: read document: %w", err)
	}
	return Unmarshal(data, v, d.opts...)
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodeValue stores n into v (which must be settable).
func decodeValue(n *node, v reflect.Value) error {
	t := v.Type()
	// Hooks on the pointer receiver, as encoding/json honours them.
	if t != timeType && v.CanAddr() && t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if handled, err := decodeHook(n, v); handled {
			return err
		}
	}
	switch t.Kind() {
	case reflect.Pointer:
		if n.kind == kNull {
			v.SetZero()
			return nil
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		return decodeValue(n, v.Elem())
	case reflect.Interface:
		return decodeInterface(n, v)
	}
	if n.kind == kNull {
		switch t.Kind() {
		case reflect.Map, reflect.Slice:
			v.SetZero()
		}
		return nil
	}
	if t == timeType {
		return decodeTime(n, v)
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return decodeScalar(n, v)
	case reflect.Slice:
		return decodeSlice(n, v)
	case reflect.Array:
		return decodeArray(n, v)
	case reflect.Map:
		return decodeMap(n, v)
	case reflect.Struct:
		return decodeStruct(n, v)
	default:
		return typeErr(n, t, "", nil)
	}
}

// decodeHook stores n through v's json.Unmarshaler or encoding.TextUnmarshaler
// on the pointer receiver, if it has one; handled reports whether it did (a
// null leaves v unchanged). v must be addressable.
func decodeHook(n *node, v reflect.Value) (handled bool, err error) {
	t := v.Type()
	pt := reflect.PointerTo(t)
	switch {
	case pt.Implements(unmarshalerType):
		if n.kind == kNull {
			return true, nil
		}
		u := v.Addr().Interface().(json.Unmarshaler)
		if err := u.UnmarshalJSON(appendJSON(nil, n)); err != nil {
			return true, typeErr(n, t, "", err)
		}
		return true, nil
	case pt.Implements(textUnmarshalerType):
		if n.kind == kNull {
			return true, nil
		}
		if n.kind != kString {
			return true, typeErr(n, t, "", nil)
		}
		u := v.Addr().Interface().(encoding.TextUnmarshaler)
		if err := u.UnmarshalText([]byte(n.s)); err != nil {
			return true, typeErr(n, t, "", err)
		}
		return true, nil
	}
	return false, nil
}

// decodeInterface stores n into an interface value: into an empty interface
// as the generic value toAny builds, into a non-empty one only through the
// pointer it already holds.
func decodeInterface(n *node, v reflect.Value) error {
	t := v.Type()
	if t.NumMethod() != 0 {
		if n.kind == kNull {
			v.SetZero()
			return nil
		}
		if !v.IsNil() && v.Elem().Kind() == reflect.Pointer {
			return decodeValue(n, v.Elem())
		}
		return typeErr(n, t, "", nil)
	}
	x, err := toAny(n)
	if err != nil {
		return err
	}
	if x == nil {
		v.SetZero()
	} else {
		v.Set(reflect.ValueOf(x))
	}
	return nil
}

// decodeTime stores an RFC 3339 string into a time.Time.
func decodeTime(n *node, v reflect.Value) error {
	t := v.Type()
	if n.kind != kString {
		return typeErr(n, t, "", nil)
	}
	tm, err := time.Parse(time.RFC3339Nano, n.s)
	if err != nil {
		return typeErr(n, t, "", err)
	}
	v.Set(reflect.ValueOf(tm))
	return nil
}

// decodeScalar stores a non-null primitive into a bool, integer, float or
// string (a Number takes a number, keeping its text).
func decodeScalar(n *node, v reflect.Value) error {
	t := v.Type()
	switch t.Kind() {
	case reflect.Bool:
		if n.kind != kBool {
			return typeErr(n, t, "", nil)
		}
		v.SetBool(n.bits != 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n.kind != kNum {
			return typeErr(n, t, "", nil)
		}
		x, err := strconv.ParseInt(n.s, 10, t.Bits())
		if err != nil {
			return typeErr(n, t, "", numErr(err))
		}
		v.SetInt(x)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n.kind != kNum {
			return typeErr(n, t, "", nil)
		}
		x, err := strconv.ParseUint(n.s, 10, t.Bits())
		if err != nil {
			return typeErr(n, t, "", numErr(err))
		}
		v.SetUint(x)
	case reflect.Float32, reflect.Float64:
		if n.kind != kNum {
			return typeErr(n, t, "", nil)
		}
		x, err := strconv.ParseFloat(n.s, t.Bits())
		if err != nil {
			return typeErr(n, t, "", numErr(err))
		}
		v.SetFloat(x)
	case reflect.String:
		want := kString
		if t == numberType {
			want = kNum
		}
		if n.kind != want {
			return typeErr(n, t, "", nil)
		}
		v.SetString(strings.Clone(n.s))
	default:
		return typeErr(n, t, "", nil)
	}
	return nil
}

// decodeSlice stores a non-null array into a slice, reusing its backing array
// when large enough; a []byte also takes a base64 string.
func decodeSlice(n *node, v reflect.Value) error {
	t := v.Type()
	if t.Elem().Kind() == reflect.Uint8 && n.kind == kString {
		b, err := base64.StdEncoding.DecodeString(n.s)
		if err != nil {
			return typeErr(n, t, "", err)
		}
		v.SetBytes(b)
		return nil
	}
	if n.kind != kArray {
		return typeErr(n, t, "", nil)
	}
	l := len(n.kids)
	if v.IsNil() || v.Cap() < l {
		v.Set(reflect.MakeSlice(t, l, l))
	} else {
		v.SetLen(l)
	}
	for i := range n.kids {
		if err := decodeValue(&n.kids[i], v.Index(i)); err != nil {
			return withPath(err, indexSeg(i))
		}
	}
	return nil
}

// decodeArray stores a non-null array into a Go array: extra items are
// dropped, missing ones zeroed.
func decodeArray(n *node, v reflect.Value) error {
	if n.kind != kArray {
		return typeErr(n, v.Type(), "", nil)
	}
	for i := 0; i < v.Len(); i++ {
		if i < len(n.kids) {
			if err := decodeValue(&n.kids[i], v.Index(i)); err != nil {
				return withPath(err, indexSeg(i))
			}
		} else {
			v.Index(i).SetZero()
		}
	}
	return nil
}

func numErr(err error) error {
	var ne *strconv.NumError
	if errors.As(err, &ne) {
		return ne.Err
	}
	return err
}

func indexSeg(i int) string { return "[" + strconv.Itoa(i) + "]" }

// withPath prefixes the field path of a type error while the decoder
// unwinds, so that paths cost nothing on success.
func withPath(err error, seg string) error {
	var te *UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	switch {
	case te.Field == "":
		te.Field = seg
	case te.Field[0] == '[':
		te.Field = seg + te.Field
	default:
		te.Field = seg + "." + te.Field
	}
	return err
}

func decodeStruct(n *node, v reflect.Value) error {
	t := v.Type()
	if n.kind != kObject {
		return typeErr(n, t, "", nil)
	}
	si := cachedStruct(t)
	for i := range n.kids {
		m := &n.kids[i]
		f := si.lookup(m.key)
		if f == nil {
			continue
		}
		fv := v
		for k, x := range f.index {
			if k > 0 && fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					if !fv.CanSet() {
						return typeErr(m, f.typ, "", errors.New("cannot set embedded pointer to unexported struct"))
					}
					fv.Set(reflect.New(fv.Type().Elem()))
				}
				fv = fv.Elem()
			}
			fv = fv.Field(x)
		}
		if err := decodeValue(m, fv); err != nil {
			return withPath(err, f.name)
		}
	}
	return nil
}

func decodeMap(n *node, v reflect.Value) error {
	t := v.Type()
	if n.kind != kObject {
		return typeErr(n, t, "", nil)
	}
	kt := t.Key()
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(t, len(n.kids)))
	}
	et := t.Elem()
	elem := reflect.New(et).Elem()
	for i := range n.kids {
		m := &n.kids[i]
		elem.SetZero()
		if err := decodeValue(m, elem); err != nil {
			return withPath(err, m.key)
		}
		var kv reflect.Value
		switch {
		case kt.Kind() == reflect.String:
			kv = reflect.ValueOf(strings.Clone(m.key)).Convert(kt)
		case reflect.PointerTo(kt).Implements(textUnmarshalerType):
			kp := reflect.New(kt)
			if err := kp.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(m.key)); err != nil {
				return typeErr(m, kt, "", err)
			}
			kv = kp.Elem()
		default:
			switch kt.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				x, err := strconv.ParseInt(m.key, 10, kt.Bits())
				if err != nil {
					return typeErr(m, kt, "", numErr(err))
				}
				kv = reflect.New(kt).Elem()
				kv.SetInt(x)
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				x, err := strconv.ParseUint(m.key, 10, kt.Bits())
				if err != nil {
					return typeErr(m, kt, "", numErr(err))
				}
				kv = reflect.New(kt).Elem()
				kv.SetUint(x)
			default:
				return typeErr(m, kt, "", errors.New("unsupported map key type"))
			}
		}
		v.SetMapIndex(kv, elem)
	}
	return nil
}

// toAny converts a tree into the generic Go representation.
func toAny(n *node) (any, error) {
	switch n.kind {
	case kNull:
		return nil, nil
	case kBool:
		return n.bits != 0, nil
	case kNum:
		f, err := strconv.ParseFloat(n.s, 64)
		if err != nil {
			return nil, typeErr(n, reflect.TypeFor[float64](), "", numErr(err))
		}
		return f, nil
	case kString:
		return strings.Clone(n.s), nil
	case kArray:
		out := make([]any, len(n.kids))
		for i := range n.kids {
			x, err := toAny(&n.kids[i])
			if err != nil {
				return nil, withPath(err, indexSeg(i))
			}
			out[i] = x
		}
		return out, nil
	case kObject:
		out := make(map[string]any, len(n.kids))
		for i := range n.kids {
			m := &n.kids[i]
			x, err := toAny(m)
			if err != nil {
				return nil, withPath(err, m.key)
			}
			out[strings.Clone(m.key)] = x
		}
		return out, nil
	}
	return nil, nil
}
