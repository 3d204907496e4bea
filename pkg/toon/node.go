package toon

import (
	"math"
	"sync"
)

// kind is the JSON-model type of a node.
type kind uint8

const (
	kNull kind = iota
	kBool
	kNum   // number kept as canonical decimal text in s
	kInt   // int64 in bits
	kUint  // uint64 in bits
	kFloat // float64 in bits (float32 when flagF32 is set)
	kString
	kArray
	kObject
)

const (
	flagKeyQuoted uint8 = 1 << iota // the key was quoted in the TOON source
	flagF32                         // kFloat came from a float32
)

// node is one value of the ordered value tree shared by the encoder, the
// decoder, FromJSON and ToJSON. Objects keep their members in order in kids
// (each with key set); arrays keep their elements in kids. Numbers decoded
// from text stay text so that no precision is lost.
type node struct {
	key   string
	s     string
	kids  []node
	bits  uint64
	line  int32
	kind  kind
	flags uint8
}

func (n *node) isPrimitive() bool { return n.kind < kArray }

func (n *node) float() float64 { return math.Float64frombits(n.bits) }

// arena hands out node slices from large chunks so that building a tree
// costs a handful of allocations instead of one per container.
type arena struct {
	chunk  []node
	chunks [][]node // full chunks kept for reuse
	stack  []node   // scratch stack used while parsing
	buf    []byte   // scratch bytes (unescaping, number text)
	out    []byte   // pooled output buffer
	tmp    []byte   // scratch for the direct encoder
	ms     marshalState
	lines  []line // line table reused by the decoder
}

const minChunk = 512

func (a *arena) alloc(n int) []node {
	if n == 0 {
		return nil
	}
	if cap(a.chunk)-len(a.chunk) < n {
		if a.chunk != nil {
			a.chunks = append(a.chunks, a.chunk)
		}
		size := minChunk
		if cap(a.chunk) > 0 {
			size = 2 * cap(a.chunk)
		}
		if size > 1<<16 {
			size = 1 << 16
		}
		if size < n {
			size = n
		}
		a.chunk = make([]node, 0, size)
	}
	l := len(a.chunk)
	a.chunk = a.chunk[:l+n]
	return a.chunk[l : l+n : l+n]
}

// push appends a node to the scratch stack and returns its index.
func (a *arena) push(n node) int {
	a.stack = append(a.stack, n)
	return len(a.stack) - 1
}

// popTo moves the scratch stack entries from mark on into an arena slice.
func (a *arena) popTo(mark int) []node {
	n := len(a.stack) - mark
	if n == 0 {
		return []node{}
	}
	out := a.alloc(n)
	copy(out, a.stack[mark:])
	clear(a.stack[mark:])
	a.stack = a.stack[:mark]
	return out
}

var arenaPool = sync.Pool{New: func() any { return new(arena) }}

func getArena() *arena { return arenaPool.Get().(*arena) }

// putArena clears every node handed out (so that the pool does not keep
// user data alive) and returns the arena to the pool. Callers must not use
// trees built from it afterwards.
func putArena(a *arena) {
	if cap(a.chunk) > 1<<17 || cap(a.stack) > 1<<17 || cap(a.lines) > 1<<17 {
		return // do not keep huge arenas alive in the pool
	}
	for _, c := range a.chunks {
		clear(c)
	}
	a.chunks = a.chunks[:0]
	clear(a.chunk)
	a.chunk = a.chunk[:0]
	clear(a.stack)
	a.stack = a.stack[:0]
	clear(a.lines[:cap(a.lines)])
	a.lines = a.lines[:0]
	a.buf = a.buf[:0]
	if cap(a.out) > 4<<20 {
		a.out = nil
	}
	arenaPool.Put(a)
}
