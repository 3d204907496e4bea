package toon

import (
	"fmt"
	"strings"
)

// expand applies safe path expansion (§13.4) to the tree in place: unquoted
// dotted keys whose segments are all identifiers become nested objects,
// deep-merged in document order.
func (p *parser) expand(n *node) error {
	switch n.kind {
	case kArray:
		for i := range n.kids {
			if err := p.expand(&n.kids[i]); err != nil {
				return err
			}
		}
	case kObject:
		need := false
		for i := range n.kids {
			if err := p.expand(&n.kids[i]); err != nil {
				return err
			}
			if expandable(&n.kids[i]) {
				need = true
			}
		}
		if !need {
			return nil
		}
		out := make([]node, 0, len(n.kids))
		for i := range n.kids {
			m := n.kids[i]
			var err error
			if expandable(&m) {
				segs := strings.Split(m.key, ".")
				out, err = p.insertPath(out, segs, m, "")
			} else {
				out, err = p.insertPath(out, []string{m.key}, m, "")
			}
			if err != nil {
				return err
			}
		}
		n.kids = out
	}
	return nil
}

func expandable(m *node) bool {
	if m.flags&flagKeyQuoted != 0 || !containsByte(m.key, '.') {
		return false
	}
	for _, s := range strings.Split(m.key, ".") {
		if !isIdentifier(s) {
			return false
		}
	}
	return true
}

func kindName(n *node) string {
	switch n.kind {
	case kObject:
		return "object"
	case kArray:
		return "array"
	}
	return "primitive"
}

func (p *parser) conflict(path string, have, val *node) error {
	return &SyntaxError{Line: int(val.line), Msg: fmt.Sprintf("expansion conflict at path '%s' (%s vs %s)", path, kindName(have), kindName(val))}
}

// insertPath places val under the key path segs inside the member list obj.
func (p *parser) insertPath(obj []node, segs []string, val node, prefix string) ([]node, error) {
	key := segs[0] //nolint:gosec // G602: callers pass at least one segment; the recursion stops at one
	path := joinPath(prefix, key)
	idx := findMember(obj, key)
	if len(segs) == 1 {
		val.key = key
		if idx < 0 {
			return append(obj, val), nil
		}
		have := &obj[idx]
		if have.kind == kObject && val.kind == kObject {
			kids := have.kids
			for i := range val.kids {
				var err error
				kids, err = p.insertPath(kids, []string{val.kids[i].key}, val.kids[i], path)
				if err != nil {
					return nil, err
				}
			}
			have.kids = kids
			return obj, nil
		}
		if p.cfg.strict {
			return nil, p.conflict(path, have, &val)
		}
		obj[idx] = val
		return obj, nil
	}
	if idx < 0 {
		obj = append(obj, node{kind: kObject, key: key, kids: []node{}, line: val.line})
		idx = len(obj) - 1
	} else if obj[idx].kind != kObject {
		if p.cfg.strict {
			return nil, p.conflict(path, &obj[idx], &node{kind: kObject, line: val.line})
		}
		obj[idx] = node{kind: kObject, key: key, kids: []node{}, line: val.line}
	}
	kids, err := p.insertPath(obj[idx].kids, segs[1:], val, path) //nolint:gosec // G602: idx is a member found or appended above
	if err != nil {
		return nil, err
	}
	obj[idx].kids = kids
	return obj, nil
}

func findMember(obj []node, key string) int {
	for i := range obj {
		if obj[i].key == key {
			return i
		}
	}
	return -1
}
