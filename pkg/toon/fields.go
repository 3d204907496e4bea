package toon

import (
	"reflect"
	"sort"
	"strings"
	"sync"
)

// field is one encodable struct field after tag resolution and promotion
// of embedded structs (the encoding/json rules, with toon tags first).
type field struct {
	name      string
	index     []int
	typ       reflect.Type
	omitEmpty bool
	omitZero  bool
	tagged    bool
}

type structInfo struct {
	fields []field
	byName map[string]int // exact name → index in fields
}

var structCache sync.Map // reflect.Type → *structInfo

func cachedStruct(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	fs := typeFields(t)
	si := &structInfo{fields: fs, byName: make(map[string]int, len(fs))}
	for i, f := range fs {
		si.byName[f.name] = i
	}
	v, _ := structCache.LoadOrStore(t, si)
	return v.(*structInfo)
}

// lookup finds the field for a key: exact match first, then a
// case-insensitive match as encoding/json does.
func (si *structInfo) lookup(key string) *field {
	if i, ok := si.byName[key]; ok {
		return &si.fields[i]
	}
	for i := range si.fields {
		if strings.EqualFold(si.fields[i].name, key) {
			return &si.fields[i]
		}
	}
	return nil
}

func parseTag(sf reflect.StructField) (name string, omitEmpty, omitZero, skip, tagged bool) {
	tag, ok := sf.Tag.Lookup("toon")
	if !ok {
		tag, ok = sf.Tag.Lookup("json")
	}
	if !ok {
		return "", false, false, false, false
	}
	if tag == "-" {
		return "", false, false, true, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		switch o {
		case "omitempty":
			omitEmpty = true
		case "omitzero":
			omitZero = true
		}
	}
	return name, omitEmpty, omitZero, false, name != ""
}

// typeFields returns the fields of struct type t in declaration order,
// with embedded struct fields promoted and name conflicts resolved.
func typeFields(t reflect.Type) []field {
	type queued struct {
		typ   reflect.Type
		index []int
	}
	current := []queued{}
	next := []queued{{typ: t}}
	visited := map[reflect.Type]bool{}
	var count map[reflect.Type]int
	nextCount := map[reflect.Type]int{}
	var fields []field
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, q := range current {
			if visited[q.typ] {
				continue
			}
			visited[q.typ] = true
			for i := 0; i < q.typ.NumField(); i++ {
				sf := q.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				name, omitEmpty, omitZero, skip, tagged := parseTag(sf)
				if skip {
					continue
				}
				index := make([]int, len(q.index)+1)
				copy(index, q.index)
				index[len(q.index)] = i
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					if name == "" {
						name = sf.Name
					}
					fields = append(fields, field{name: name, index: index, typ: sf.Type, omitEmpty: omitEmpty, omitZero: omitZero, tagged: tagged})
					if count[q.typ] > 1 {
						// Two copies at the same level cancel each other; keep
						// one and let the dominance pass drop it.
						fields = append(fields, fields[len(fields)-1])
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, queued{typ: ft, index: index})
				}
			}
		}
	}
	// Order by name, then depth, then tagged, then index, to pick dominants.
	sort.SliceStable(fields, func(i, j int) bool {
		a, b := fields[i], fields[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if len(a.index) != len(b.index) {
			return len(a.index) < len(b.index)
		}
		if a.tagged != b.tagged {
			return a.tagged
		}
		return lessIndex(a.index, b.index)
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		group := fields[i:j]
		if len(group) == 1 || len(group[0].index) < len(group[1].index) || (group[0].tagged && !group[1].tagged) {
			out = append(out, group[0])
		}
		i = j
	}
	fields = out
	sort.Slice(fields, func(i, j int) bool { return lessIndex(fields[i].index, fields[j].index) })
	return fields
}

func lessIndex(a, b []int) bool {
	for k := range a {
		if k >= len(b) {
			return false
		}
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return len(a) < len(b)
}
