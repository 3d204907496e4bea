package store

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeVector returns v as little-endian float32 bytes, the wire format of
// MariaDB's VECTOR type.
func EncodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector parses little-endian float32 bytes.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("decode vector: %d bytes is not a multiple of 4", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// checkVector validates a vector against the model: right width, finite, non-zero
// (cosine distance is undefined for the zero vector).
func checkVector(m Model, v []float32, what string) error {
	if len(v) != m.Dims {
		return &DimensionError{Model: m, Got: len(v), What: what}
	}
	var norm float64
	for i, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return invalid(what+" vector", "component %d is %v", i, f)
		}
		norm += float64(f) * float64(f)
	}
	if norm == 0 {
		return invalid(what+" vector", "all zero; cosine distance needs a non-zero vector")
	}
	return nil
}
