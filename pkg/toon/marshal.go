package toon

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Marshal returns the TOON encoding of v.
//
// Go values map to the JSON data model the way encoding/json maps them:
// structs become objects with fields named by `toon` tags, falling back to
// `json` tags and then the field name (options omitempty and omitzero,
// "-" to skip); maps become objects with sorted keys; slices and arrays
// become arrays ([]byte as a base64 string); pointers and interfaces are
// followed, nil becomes null. time.Time is written as RFC 3339 text,
// json.Number as a canonical number, and types implementing json.Marshaler
// or encoding.TextMarshaler are honoured (json.Marshaler first). NaN and
// infinities become null (§3). Channels, functions and complex numbers are
// rejected with an *UnsupportedTypeError.
func Marshal(v any, opts ...Option) ([]byte, error) {
	cfg, err := newConfig(opts)
	if err != nil {
		return nil, err
	}
	a := getArena()
	defer putArena(a)
	buf, err := marshalInto(a, &cfg, v)
	if err != nil {
		return nil, err
	}
	return slices.Clone(buf), nil
}

// marshalInto encodes v using the arena's pooled output buffer.
func marshalInto(a *arena, cfg *config, v any) ([]byte, error) {
	// The encoder state lives in the pooled arena so that a Marshal call
	// allocates only its result.
	m := &a.ms
	m.cfg = *cfg
	m.b = builder{a: a}
	m.w = writer{cfg: &m.cfg, buf: a.out[:0], delim: m.cfg.delim}
	defer func() {
		a.out = m.w.buf
		m.w = writer{}
		m.b = builder{}
		m.d = direct{}
	}()
	if m.cfg.keyFolding {
		// Folding looks at whole subtrees and root keys: use the tree.
		var root node
		if err := m.b.encode(reflect.ValueOf(v), &root); err != nil {
			return nil, err
		}
		m.w.encodeDocument(&root)
		return m.w.buf, nil
	}
	m.d = direct{w: &m.w, b: &m.b, scratch: a.tmp}
	err := m.d.encodeRoot(reflect.ValueOf(v))
	a.tmp = m.d.scratch
	if err != nil {
		return nil, err
	}
	return m.w.buf, nil
}

// marshalState is the reusable state of one Marshal call.
type marshalState struct {
	cfg config
	b   builder
	w   writer
	d   direct
}

// UnsupportedTypeError is returned by Marshal for values that have no TOON
// representation.
type UnsupportedTypeError struct {
	Type reflect.Type
}

func (e *UnsupportedTypeError) Error() string {
	return "toon: unsupported type " + e.Type.String()
}

// MarshalerError wraps an error returned by a json.Marshaler or
// encoding.TextMarshaler.
type MarshalerError struct {
	Type reflect.Type
	Err  error
}

func (e *MarshalerError) Error() string {
	return fmt.Sprintf("toon: marshal %s: %v", e.Type, e.Err)
}

func (e *MarshalerError) Unwrap() error { return e.Err }

// An Encoder writes TOON documents to an output stream.
type Encoder struct {
	w   io.Writer
	cfg config
	err error
}

// NewEncoder returns an encoder writing to w with the given options.
func NewEncoder(w io.Writer, opts ...Option) *Encoder {
	cfg, err := newConfig(opts)
	return &Encoder{w: w, cfg: cfg, err: err}
}

// Encode writes the TOON encoding of v followed by a newline.
func (e *Encoder) Encode(v any) error {
	if e.err != nil {
		return e.err
	}
	a := getArena()
	defer putArena(a)
	buf, err := marshalInto(a, &e.cfg, v)
	if err != nil {
		return err
	}
	a.out = append(buf, '\n')
	_, err = e.w.Write(a.out)
	return err
}

type builder struct {
	a     *arena
	depth int
}

type encFunc func(b *builder, v reflect.Value, out *node) error

var encCache sync.Map // reflect.Type → encFunc

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	timeType          = reflect.TypeFor[time.Time]()
	numberType        = reflect.TypeFor[json.Number]()
)

func (b *builder) encode(v reflect.Value, out *node) error {
	if !v.IsValid() {
		out.kind = kNull
		return nil
	}
	return typeEncoder(v.Type())(b, v, out)
}

func typeEncoder(t reflect.Type) encFunc {
	if f, ok := encCache.Load(t); ok {
		return f.(encFunc)
	}
	// Recursive types: hand out an indirect function until the real one
	// is built.
	var (
		wg sync.WaitGroup
		f  encFunc
	)
	wg.Add(1)
	fi, loaded := encCache.LoadOrStore(t, encFunc(func(b *builder, v reflect.Value, out *node) error {
		wg.Wait()
		return f(b, v, out)
	}))
	if loaded {
		return fi.(encFunc)
	}
	f = newTypeEncoder(t, true)
	wg.Done()
	encCache.Store(t, f)
	return f
}

func newTypeEncoder(t reflect.Type, allowAddr bool) encFunc {
	switch t {
	case timeType:
		return encodeTime
	case numberType:
		return encodeNumber
	}
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(marshalerType) {
		return condAddr(addrMarshalerEncoder, newTypeEncoder(t, false))
	}
	if t.Implements(marshalerType) {
		return marshalerEncoder
	}
	if t.Kind() != reflect.Pointer && allowAddr && reflect.PointerTo(t).Implements(textMarshalerType) {
		return condAddr(addrTextMarshalerEncoder, newTypeEncoder(t, false))
	}
	if t.Implements(textMarshalerType) {
		return textMarshalerEncoder
	}
	switch t.Kind() {
	case reflect.Bool:
		return encodeBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return encodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return encodeUint
	case reflect.Float32:
		return encodeFloat32
	case reflect.Float64:
		return encodeFloat64
	case reflect.String:
		return encodeString
	case reflect.Interface:
		return encodeInterface
	case reflect.Pointer:
		return newPtrEncoder(t)
	case reflect.Struct:
		return newStructEncoder(t)
	case reflect.Map:
		return newMapEncoder(t)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(marshalerType) && !reflect.PointerTo(t.Elem()).Implements(textMarshalerType) {
			return encodeBytes
		}
		return newSliceEncoder(t)
	case reflect.Array:
		return newArrayEncoder(t)
	}
	return func(b *builder, v reflect.Value, out *node) error {
		return &UnsupportedTypeError{Type: v.Type()}
	}
}

func condAddr(addr, plain encFunc) encFunc {
	return func(b *builder, v reflect.Value, out *node) error {
		if v.CanAddr() {
			return addr(b, v, out)
		}
		return plain(b, v, out)
	}
}

func encodeBool(_ *builder, v reflect.Value, out *node) error {
	out.kind = kBool
	if v.Bool() {
		out.bits = 1
	}
	return nil
}

func encodeInt(_ *builder, v reflect.Value, out *node) error {
	out.kind, out.bits = kInt, uint64(v.Int())
	return nil
}

func encodeUint(_ *builder, v reflect.Value, out *node) error {
	out.kind, out.bits = kUint, v.Uint()
	return nil
}

func encodeFloat64(_ *builder, v reflect.Value, out *node) error {
	out.kind, out.bits = kFloat, math.Float64bits(v.Float())
	return nil
}

func encodeFloat32(_ *builder, v reflect.Value, out *node) error {
	out.kind, out.bits, out.flags = kFloat, math.Float64bits(v.Float()), flagF32
	return nil
}

func encodeString(_ *builder, v reflect.Value, out *node) error {
	out.kind, out.s = kString, v.String()
	return nil
}

func encodeNumber(b *builder, v reflect.Value, out *node) error {
	s := v.String()
	if s == "" {
		s = "0"
	}
	if ok, lz := scanNumber(s); !ok || lz {
		return &MarshalerError{Type: v.Type(), Err: fmt.Errorf("invalid number literal %q", s)}
	}
	out.kind = kNum
	out.s, b.a.buf = canonicalNumber(s, b.a.buf)
	return nil
}

func encodeTime(_ *builder, v reflect.Value, out *node) error {
	t := v.Interface().(time.Time)
	if y := t.Year(); y < 0 || y >= 10000 {
		return &MarshalerError{Type: v.Type(), Err: fmt.Errorf("year %d outside of range [0,9999]", y)}
	}
	out.kind, out.s = kString, t.Format(time.RFC3339Nano)
	return nil
}

func encodeBytes(_ *builder, v reflect.Value, out *node) error {
	if v.IsNil() {
		out.kind = kNull
		return nil
	}
	out.kind, out.s = kString, base64.StdEncoding.EncodeToString(v.Bytes())
	return nil
}

func marshalerEncoder(b *builder, v reflect.Value, out *node) error {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		out.kind = kNull
		return nil
	}
	m, ok := v.Interface().(json.Marshaler)
	if !ok {
		out.kind = kNull
		return nil
	}
	return b.fromJSONMarshaler(m, v.Type(), out)
}

func addrMarshalerEncoder(b *builder, v reflect.Value, out *node) error {
	return b.fromJSONMarshaler(v.Addr().Interface().(json.Marshaler), v.Type(), out)
}

func (b *builder) fromJSONMarshaler(m json.Marshaler, t reflect.Type, out *node) error {
	data, err := m.MarshalJSON()
	if err != nil {
		return &MarshalerError{Type: t, Err: err}
	}
	jp := jsonParser{s: string(data), a: b.a}
	n, err := jp.parseDocument()
	if err != nil {
		return &MarshalerError{Type: t, Err: err}
	}
	*out = n
	return nil
}

func textMarshalerEncoder(b *builder, v reflect.Value, out *node) error {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		out.kind = kNull
		return nil
	}
	m, ok := v.Interface().(encoding.TextMarshaler)
	if !ok {
		out.kind = kNull
		return nil
	}
	return textOut(m, v.Type(), out)
}

func addrTextMarshalerEncoder(b *builder, v reflect.Value, out *node) error {
	return textOut(v.Addr().Interface().(encoding.TextMarshaler), v.Type(), out)
}

func textOut(m encoding.TextMarshaler, t reflect.Type, out *node) error {
	text, err := m.MarshalText()
	if err != nil {
		return &MarshalerError{Type: t, Err: err}
	}
	out.kind, out.s = kString, string(text)
	return nil
}

func (b *builder) enter(t reflect.Type) error {
	if b.depth++; b.depth > maxEncodeNesting {
		return &UnsupportedTypeError{Type: t} // a cycle or absurd nesting
	}
	return nil
}

func encodeInterface(b *builder, v reflect.Value, out *node) error {
	if v.IsNil() {
		out.kind = kNull
		return nil
	}
	e := v.Elem()
	// Fast paths for the dynamic types of decoded JSON.
	switch e.Kind() {
	case reflect.String:
		if e.Type() == reflect.TypeFor[string]() {
			out.kind, out.s = kString, e.String()
			return nil
		}
	case reflect.Float64:
		if e.Type() == reflect.TypeFor[float64]() {
			out.kind, out.bits = kFloat, math.Float64bits(e.Float())
			return nil
		}
	case reflect.Bool:
		if e.Type() == reflect.TypeFor[bool]() {
			return encodeBool(b, e, out)
		}
	}
	return typeEncoder(e.Type())(b, e, out)
}

func newPtrEncoder(t reflect.Type) encFunc {
	elem := typeEncoder(t.Elem())
	return func(b *builder, v reflect.Value, out *node) error {
		if v.IsNil() {
			out.kind = kNull
			return nil
		}
		if err := b.enter(t); err != nil {
			return err
		}
		err := elem(b, v.Elem(), out)
		b.depth--
		return err
	}
}

type fieldEnc struct {
	name      string
	index     []int
	enc       encFunc
	omitEmpty bool
	omitZero  bool
}

func newStructEncoder(t reflect.Type) encFunc {
	si := cachedStruct(t)
	fes := make([]fieldEnc, len(si.fields))
	for i, f := range si.fields {
		fes[i] = fieldEnc{name: f.name, index: f.index, enc: typeEncoder(f.typ), omitEmpty: f.omitEmpty, omitZero: f.omitZero}
	}
	return func(b *builder, v reflect.Value, out *node) error {
		if err := b.enter(t); err != nil {
			return err
		}
		defer func() { b.depth-- }()
		kids := b.a.alloc(len(fes))
		n := 0
	fields:
		for i := range fes {
			fe := &fes[i]
			fv := v
			if len(fe.index) == 1 {
				fv = v.Field(fe.index[0])
			} else {
				for k, x := range fe.index {
					if k > 0 && fv.Kind() == reflect.Pointer {
						if fv.IsNil() {
							continue fields
						}
						fv = fv.Elem()
					}
					fv = fv.Field(x)
				}
			}
			if fe.omitEmpty && isEmptyValue(fv) {
				continue
			}
			if fe.omitZero && isZeroValue(fv) {
				continue
			}
			k := &kids[n]
			if err := fe.enc(b, fv, k); err != nil {
				return err
			}
			k.key = fe.name
			n++
		}
		out.kind, out.kids = kObject, kids[:n:n]
		return nil
	}
}

func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

type isZeroer interface{ IsZero() bool }

func isZeroValue(v reflect.Value) bool {
	if z, ok := v.Interface().(isZeroer); ok {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return z.IsZero()
	}
	return v.IsZero()
}

type mapEntry struct {
	key string
	val reflect.Value
}

func newMapEncoder(t reflect.Type) encFunc {
	kt := t.Key()
	switch kt.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		if !kt.Implements(textMarshalerType) {
			return func(b *builder, v reflect.Value, out *node) error {
				return &UnsupportedTypeError{Type: t}
			}
		}
	}
	elem := typeEncoder(t.Elem())
	return func(b *builder, v reflect.Value, out *node) error {
		if v.IsNil() {
			out.kind = kNull
			return nil
		}
		if err := b.enter(t); err != nil {
			return err
		}
		defer func() { b.depth-- }()
		entries := make([]mapEntry, 0, v.Len())
		it := v.MapRange()
		for it.Next() {
			k, err := mapKey(it.Key())
			if err != nil {
				return err
			}
			entries = append(entries, mapEntry{key: k, val: it.Value()})
		}
		slices.SortFunc(entries, func(x, y mapEntry) int {
			switch {
			case x.key < y.key:
				return -1
			case x.key > y.key:
				return 1
			}
			return 0
		})
		kids := b.a.alloc(len(entries))
		for i := range entries {
			if err := elem(b, entries[i].val, &kids[i]); err != nil {
				return err
			}
			kids[i].key = entries[i].key
		}
		out.kind, out.kids = kObject, kids
		if out.kids == nil {
			out.kids = []node{}
		}
		return nil
	}
}

func mapKey(k reflect.Value) (string, error) {
	if k.Kind() == reflect.String {
		return k.String(), nil
	}
	if tm, ok := k.Interface().(encoding.TextMarshaler); ok {
		if k.Kind() == reflect.Pointer && k.IsNil() {
			return "", nil
		}
		b, err := tm.MarshalText()
		if err != nil {
			return "", &MarshalerError{Type: k.Type(), Err: err}
		}
		return string(b), nil
	}
	switch k.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(k.Uint(), 10), nil
	}
	return "", &UnsupportedTypeError{Type: k.Type()}
}

func newSliceEncoder(t reflect.Type) encFunc {
	arr := newArrayEncoder(t)
	return func(b *builder, v reflect.Value, out *node) error {
		if v.IsNil() {
			out.kind = kNull
			return nil
		}
		if err := b.enter(t); err != nil {
			return err
		}
		err := arr(b, v, out)
		b.depth--
		return err
	}
}

func newArrayEncoder(t reflect.Type) encFunc {
	elem := typeEncoder(t.Elem())
	return func(b *builder, v reflect.Value, out *node) error {
		n := v.Len()
		kids := b.a.alloc(n)
		for i := 0; i < n; i++ {
			if err := elem(b, v.Index(i), &kids[i]); err != nil {
				return err
			}
		}
		if kids == nil {
			kids = []node{}
		}
		out.kind, out.kids = kArray, kids
		return nil
	}
}
