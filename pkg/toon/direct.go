package toon

import (
	"encoding"
	"encoding/base64"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The direct encoder writes Go values straight into the output buffer
// without building a tree, for the shapes that can be decided from the
// static type: primitives, structs and string-keyed maps as objects,
// arrays of primitives (inline) and slices of flat structs (tabular).
// Anything else (arrays of mixed or nested values, json.Marshaler values,
// key folding) is converted to a tree for that subtree and written by the
// tree writer, which makes the same layout decisions.

type category uint8

const (
	catPrim    category = iota
	catObject           // struct or map with string-like keys
	catArray            // slice or array
	catDynamic          // pointer or interface: resolve at run time
	catTree             // needs the tree encoder
)

type dfield struct {
	name      string
	index     []int
	info      *dinfo
	omitEmpty bool
	omitZero  bool
}

type primFunc func(d *direct, b []byte, v reflect.Value, delim byte) ([]byte, error)

type dinfo struct {
	cat     category
	prim    primFunc
	fields  []dfield // structs
	isMap   bool
	anyMap  bool // map[string]any
	elem    *dinfo
	tabular bool // slice/array of flat structs: always tabular when non-empty
	nilable bool // slice or map: nil encodes as null
}

var (
	dinfoCache sync.Map // reflect.Type → *dinfo
	dinfoMu    sync.Mutex
)

func infoOf(t reflect.Type) *dinfo {
	if di, ok := dinfoCache.Load(t); ok {
		return di.(*dinfo)
	}
	dinfoMu.Lock()
	defer dinfoMu.Unlock()
	building := map[reflect.Type]*dinfo{}
	di := buildInfo(t, building)
	for bt, bi := range building {
		dinfoCache.LoadOrStore(bt, bi)
	}
	return di
}

func buildInfo(t reflect.Type, building map[reflect.Type]*dinfo) *dinfo {
	if di, ok := dinfoCache.Load(t); ok {
		return di.(*dinfo)
	}
	if di, ok := building[t]; ok {
		return di
	}
	di := &dinfo{}
	building[t] = di
	switch t {
	case timeType:
		di.prim = primTime
		return di
	case numberType:
		di.prim = primNumber
		return di
	}
	if t.Implements(marshalerType) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType)) ||
		(t.Kind() != reflect.Pointer && !t.Implements(textMarshalerType) && reflect.PointerTo(t).Implements(textMarshalerType)) {
		di.cat = catTree
		return di
	}
	if t.Implements(textMarshalerType) {
		if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface {
			di.cat = catTree
		} else {
			di.prim = primText
		}
		return di
	}
	switch t.Kind() {
	case reflect.Bool:
		di.prim = primBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		di.prim = primInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		di.prim = primUint
	case reflect.Float32:
		di.prim = primFloat32
	case reflect.Float64:
		di.prim = primFloat64
	case reflect.String:
		di.prim = primString
	case reflect.Pointer, reflect.Interface:
		di.cat = catDynamic
	case reflect.Struct:
		di.cat = catObject
		si := cachedStruct(t)
		di.fields = make([]dfield, len(si.fields))
		for i, f := range si.fields {
			di.fields[i] = dfield{name: f.name, index: f.index, info: buildInfo(f.typ, building), omitEmpty: f.omitEmpty, omitZero: f.omitZero}
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key().Implements(textMarshalerType) {
			di.cat = catTree
			break
		}
		di.cat, di.isMap, di.nilable = catObject, true, true
		di.anyMap = t == reflect.TypeFor[map[string]any]()
		di.elem = buildInfo(t.Elem(), building)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(marshalerType) && !reflect.PointerTo(t.Elem()).Implements(textMarshalerType) {
			di.prim = primBytes
			break
		}
		di.nilable = true
		fallthrough
	case reflect.Array:
		di.cat = catArray
		di.elem = buildInfo(t.Elem(), building)
		di.tabular = flatStruct(t.Elem(), di.elem)
	default:
		di.cat = catTree
	}
	return di
}

// flatStruct reports whether every value of struct type t is an object with
// the same non-empty key set and primitive values only.
func flatStruct(t reflect.Type, di *dinfo) bool {
	if t.Kind() != reflect.Struct || di.cat != catObject || len(di.fields) == 0 {
		return false
	}
	for _, f := range di.fields {
		if len(f.index) != 1 || f.omitEmpty || f.omitZero || f.info.cat != catPrim || f.info.prim == nil {
			return false
		}
		if f.info.prim == nil {
			return false
		}
	}
	return true
}

// direct carries the state of one direct encoding.
type direct struct {
	w       *writer
	b       *builder
	scratch []byte
	nest    int
}

func (d *direct) enter() error {
	if d.nest++; d.nest > maxEncodeNesting {
		return fmt.Errorf("toon: value nested deeper than %d levels (cyclic?)", maxEncodeNesting)
	}
	return nil
}

// resolve follows pointers and interfaces; ok is false for nil.
func (d *direct) resolve(v reflect.Value, di *dinfo) (reflect.Value, *dinfo, bool) {
	for di.cat == catDynamic {
		if v.IsNil() {
			return v, di, false
		}
		v = v.Elem()
		di = infoOf(v.Type())
	}
	return v, di, true
}

func (d *direct) encodeRoot(v reflect.Value) error {
	w := d.w
	if !v.IsValid() {
		w.buf = append(w.buf, "null"...)
		return nil
	}
	v, di, ok := d.resolve(v, infoOf(v.Type()))
	if !ok {
		w.buf = append(w.buf, "null"...)
		return nil
	}
	start := len(w.buf)
	var err error
	switch di.cat {
	case catPrim:
		w.buf, err = di.prim(d, w.buf, v, w.delim)
		w.nl()
	case catObject:
		if di.nilable && v.IsNil() {
			w.buf = append(w.buf, "null\n"...)
			break
		}
		err = d.writeObject(v, di, 0)
	case catArray:
		err = d.writeArray("", false, v, di, 0)
	default:
		err = d.tree("", false, v, 0)
	}
	if err != nil {
		return err
	}
	if len(w.buf) > start && w.buf[len(w.buf)-1] == '\n' {
		w.buf = w.buf[:len(w.buf)-1]
	}
	return nil
}

// tree encodes v through the value tree, as a field named key or (hasKey
// false) as a root value. The line indentation is already written for
// fields.
func (d *direct) tree(key string, hasKey bool, v reflect.Value, depth int) error {
	var n node
	if err := d.b.encode(v, &n); err != nil {
		return err
	}
	if hasKey {
		d.w.writeKeyed(key, &n, depth, "", d.w.cfg.flattenDepth)
		return nil
	}
	switch n.kind {
	case kObject:
		d.w.writeFields(&n, depth, "", d.w.cfg.flattenDepth)
	case kArray:
		d.w.writeArray("", false, &n, depth, false)
	default:
		d.w.writePrimitive(&n, d.w.delim)
		d.w.nl()
	}
	return nil
}

func (d *direct) writeField(key string, v reflect.Value, di *dinfo, depth int) error {
	w := d.w
	w.indent(depth)
	if di.cat == catDynamic {
		if err := d.enter(); err != nil {
			return err
		}
		defer func() { d.nest-- }()
		var ok bool
		if v, di, ok = d.resolve(v, di); !ok {
			w.writeKey(key)
			w.buf = append(w.buf, ": null\n"...)
			return nil
		}
	}
	switch di.cat {
	case catPrim:
		w.writeKey(key)
		w.buf = append(w.buf, ':', ' ')
		var err error
		if w.buf, err = di.prim(d, w.buf, v, w.delim); err != nil {
			return err
		}
		w.nl()
		return nil
	case catObject:
		w.writeKey(key)
		if di.nilable && v.IsNil() {
			w.buf = append(w.buf, ": null\n"...)
			return nil
		}
		w.buf = append(w.buf, ':', '\n')
		return d.writeObject(v, di, depth+1)
	case catArray:
		return d.writeArray(key, true, v, di, depth)
	}
	return d.tree(key, true, v, depth)
}

func (d *direct) writeObject(v reflect.Value, di *dinfo, depth int) error {
	if err := d.enter(); err != nil {
		return err
	}
	defer func() { d.nest-- }()
	if di.isMap {
		return d.writeMap(v, di, depth)
	}
fields:
	for i := range di.fields {
		f := &di.fields[i]
		var fv reflect.Value
		if len(f.index) == 1 {
			fv = v.Field(f.index[0])
		} else {
			fv = v
			for k, x := range f.index {
				if k > 0 && fv.Kind() == reflect.Pointer {
					if fv.IsNil() {
						continue fields
					}
					fv = fv.Elem()
				}
				fv = fv.Field(x)
			}
		}
		if f.omitEmpty && isEmptyValue(fv) {
			continue
		}
		if f.omitZero && isZeroValue(fv) {
			continue
		}
		if err := d.writeField(f.name, fv, f.info, depth); err != nil {
			return err
		}
	}
	return nil
}

func (d *direct) writeMap(v reflect.Value, di *dinfo, depth int) error {
	if di.anyMap {
		m := v.Interface().(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			x := m[k]
			if err := d.writeAnyField(k, x, depth); err != nil {
				return err
			}
		}
		return nil
	}
	entries := make([]mapEntry, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		entries = append(entries, mapEntry{key: it.Key().String(), val: it.Value()})
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
	for i := range entries {
		if err := d.writeField(entries[i].key, entries[i].val, di.elem, depth); err != nil {
			return err
		}
	}
	return nil
}

// writeAnyField is writeField for the dynamic values of map[string]any,
// with fast paths for the types decoded JSON holds.
func (d *direct) writeAnyField(key string, x any, depth int) error {
	w := d.w
	switch x := x.(type) {
	case nil:
		w.indent(depth)
		w.writeKey(key)
		w.buf = append(w.buf, ": null\n"...)
		return nil
	case string:
		w.indent(depth)
		w.writeKey(key)
		w.buf = append(w.buf, ':', ' ')
		w.writeString(x, w.delim)
		w.nl()
		return nil
	case float64:
		w.indent(depth)
		w.writeKey(key)
		w.buf = append(w.buf, ':', ' ')
		w.buf = appendFloat(w.buf, x, 64)
		w.nl()
		return nil
	case bool:
		w.indent(depth)
		w.writeKey(key)
		if x {
			w.buf = append(w.buf, ": true\n"...)
		} else {
			w.buf = append(w.buf, ": false\n"...)
		}
		return nil
	case map[string]any:
		w.indent(depth)
		w.writeKey(key)
		if x == nil {
			w.buf = append(w.buf, ": null\n"...)
			return nil
		}
		w.buf = append(w.buf, ':', '\n')
		if err := d.enter(); err != nil {
			return err
		}
		defer func() { d.nest-- }()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if err := d.writeAnyField(k, x[k], depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	v := reflect.ValueOf(x)
	return d.writeField(key, v, infoOf(v.Type()), depth)
}

// writeArray writes an array field (hasKey) or root array; the line
// indentation for fields is already out.
func (d *direct) writeArray(key string, hasKey bool, v reflect.Value, di *dinfo, depth int) error {
	w := d.w
	if di.nilable && v.IsNil() {
		if hasKey {
			w.writeKey(key)
			w.buf = append(w.buf, ": null\n"...)
		} else {
			w.buf = append(w.buf, "null\n"...)
		}
		return nil
	}
	n := v.Len()
	if n == 0 {
		if hasKey {
			w.writeKey(key)
			w.buf = append(w.buf, ": []\n"...)
		} else {
			w.buf = append(w.buf, "[]\n"...)
		}
		return nil
	}
	el := di.elem
	switch {
	case el.cat == catPrim:
		if hasKey {
			w.writeKey(key)
		}
		w.writeHeader(n)
		buf := append(w.buf, ':', ' ')
		var err error
		for i := 0; i < n; i++ {
			if i > 0 {
				buf = append(buf, w.delim)
			}
			if buf, err = el.prim(d, buf, v.Index(i), w.delim); err != nil {
				return err
			}
		}
		w.buf = append(buf, '\n')
		return nil
	case di.tabular:
		if hasKey {
			w.writeKey(key)
		}
		w.writeHeader(n)
		w.buf = append(w.buf, '{')
		for j := range el.fields {
			if j > 0 {
				w.buf = append(w.buf, w.delim)
			}
			w.writeFieldName(el.fields[j].name)
		}
		w.buf = append(w.buf, '}', ':', '\n')
		ind := (depth + 1) * w.cfg.indent
		delim := w.delim
		buf := w.buf
		var err error
		for i := 0; i < n; i++ {
			row := v.Index(i)
			for k := 0; k < ind; k++ {
				buf = append(buf, ' ')
			}
			for j := range el.fields {
				if j > 0 {
					buf = append(buf, delim)
				}
				f := &el.fields[j]
				if buf, err = f.info.prim(d, buf, row.Field(f.index[0]), delim); err != nil {
					w.buf = buf
					return err
				}
			}
			buf = append(buf, '\n')
		}
		w.buf = buf
		return nil
	}
	return d.tree(key, hasKey, v, depth)
}

func primBool(_ *direct, b []byte, v reflect.Value, _ byte) ([]byte, error) {
	if v.Bool() {
		return append(b, "true"...), nil
	}
	return append(b, "false"...), nil
}

func primInt(_ *direct, b []byte, v reflect.Value, _ byte) ([]byte, error) {
	return strconv.AppendInt(b, v.Int(), 10), nil
}

func primUint(_ *direct, b []byte, v reflect.Value, _ byte) ([]byte, error) {
	return strconv.AppendUint(b, v.Uint(), 10), nil
}

func primFloat64(_ *direct, b []byte, v reflect.Value, _ byte) ([]byte, error) {
	return appendFloat(b, v.Float(), 64), nil
}

func primFloat32(_ *direct, b []byte, v reflect.Value, _ byte) ([]byte, error) {
	return appendFloat(b, v.Float(), 32), nil
}

func primString(_ *direct, b []byte, v reflect.Value, delim byte) ([]byte, error) {
	return appendString(b, v.String(), delim), nil
}

func primTime(d *direct, b []byte, v reflect.Value, delim byte) ([]byte, error) {
	t := v.Interface().(time.Time)
	if y := t.Year(); y < 0 || y >= 10000 {
		return b, &MarshalerError{Type: v.Type(), Err: fmt.Errorf("year %d outside of range [0,9999]", y)}
	}
	d.scratch = t.AppendFormat(d.scratch[:0], time.RFC3339Nano)
	return appendString(b, bytesToString(d.scratch), delim), nil
}

func primNumber(d *direct, b []byte, v reflect.Value, _ byte) ([]byte, error) {
	var n node
	if err := encodeNumber(d.b, v, &n); err != nil {
		return b, err
	}
	return append(b, n.s...), nil
}

func primText(_ *direct, b []byte, v reflect.Value, delim byte) ([]byte, error) {
	m, ok := v.Interface().(encoding.TextMarshaler)
	if !ok {
		return append(b, "null"...), nil
	}
	text, err := m.MarshalText()
	if err != nil {
		return b, &MarshalerError{Type: v.Type(), Err: err}
	}
	return appendString(b, bytesToString(text), delim), nil
}

func primBytes(d *direct, b []byte, v reflect.Value, delim byte) ([]byte, error) {
	if v.IsNil() {
		return append(b, "null"...), nil
	}
	raw := v.Bytes()
	n := base64.StdEncoding.EncodedLen(len(raw))
	d.scratch = slices.Grow(d.scratch[:0], n)[:n]
	base64.StdEncoding.Encode(d.scratch, raw)
	return appendString(b, bytesToString(d.scratch), delim), nil
}
