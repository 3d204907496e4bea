// Package toon encodes and decodes TOON (Token-Oriented Object Notation),
// version 3.3 of the specification: a line-oriented, indentation-based
// rendering of the JSON data model that declares array lengths and tabular
// field lists once, which makes it cheaper than JSON in LLM tokens.
//
//	users[2]{id,name,role}:
//	  1,Alice,admin
//	  2,Bob,user
//
// The package offers three layers:
//
//   - Marshal and Unmarshal for Go values (structs, maps, slices, pointers,
//     json.Number, time.Time, json.Marshaler and encoding.TextMarshaler),
//     plus the streaming Encoder and Decoder;
//   - FromJSON and ToJSON, which convert JSON text to TOON and back while
//     keeping key order and number digits exactly;
//   - Negotiate and WriteHTTP, which pick TOON or JSON for an HTTP response
//     from ?format= or the Accept header.
//
// # Conformance
//
// The encoder and decoder pass all 400 cases of the official conformance
// suite (see conformance_test.go), and encode byte for byte as the reference
// implementation does (@toon-format/toon 2.3.1, the TypeScript encoder of spec
// 3; reference_test.go compares 3,001 generated documents under every
// delimiter, an indent of 4 and safe key folding, and has the reference decode
// each of ours back). Encoding follows the canonical forms of
// the specification: tabular arrays for uniform objects with primitive
// values, inline primitive arrays, "- " list items otherwise, minimal
// quoting, LF line endings, no trailing spaces or newline. Decoding is strict
// by default (WithStrict): it checks counts, row widths, indentation, blank
// lines inside arrays, duplicate keys, header syntax and delimiters, and
// reports a *SyntaxError with the line, column and broken rule, for example
//
//	toon: line 3: tabular row has 2 values, header declares 3
//
// Optional key folding (WithKeyFolding, WithFlattenDepth) and path expansion
// (WithExpandPaths) implement the "safe" modes of §13.4.
//
// # Numbers
//
// Numbers are canonical decimals: no exponent for 1e-6 <= |n| < 1e21, no
// leading or trailing zeros, -0 written as 0, NaN and infinities as null.
// Outside that range the form is d.ddde±x. FromJSON and ToJSON never go
// through float64: the decimal digits of the input are kept, so large
// integers and long fractions survive exactly (lossless policy). Unmarshal
// parses numbers into the target Go type and reports overflow as an
// *UnmarshalTypeError; into an empty interface numbers become float64.
//
// # Host types
//
// Go values map to the JSON model as in encoding/json, with `toon` struct
// tags taking precedence over `json` tags; map keys are sorted; time.Time is
// RFC 3339 text (time.RFC3339Nano); []byte is base64. Tabs in indentation
// are rejected in strict mode; in lenient mode a tab counts as one
// indentation level.
package toon
