package httpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"
)

// DecodeJSON reads exactly one JSON value from body into v, strictly: a field v does
// not declare, a key given twice in one object (at any depth), a value of the wrong
// type, invalid JSON (nested deeper than encoding/json's 10000 levels included), an
// empty body or anything after the value is a 400 *Error whose Field names the field at fault ("body" when
// there is none) and whose Detail says what to send. A body over the server's limit
// (MaxBodyBytes, applied to every request) is returned as the *http.MaxBytesError,
// which the error mapper answers with 413. Handlers of all services decode their
// bodies with it so that the same mistake gets the same answer everywhere.
func DecodeJSON(body io.Reader, v any) error {
	if body == nil {
		return BadRequest("body", "the request body is empty; send a JSON object")
	}
	// The body is read whole (it is bounded by MaxBodyBytes) so that an unknown
	// field can be found again and named by its path.
	data, err := io.ReadAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return BadRequest("body", "the request body could not be read: "+err.Error())
	}
	// A UTF-8 byte order mark (sent by some Windows tools) is not JSON, but RFC 8259
	// §8.1 lets a parser ignore it; refusing it would name a character the
	// client cannot see.
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, v, data)
	}
	// One value only: the next token must be the end of the body.
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return BadRequest("body", "the body holds more than one JSON value; send one JSON object")
	}
	// encoding/json keeps the last of two values of one key; refuse the
	// ambiguity instead (decodedup.go).
	return duplicateKeyError(data, v)
}

// decodeError turns a json.Decoder error into a 400 naming the field.
func decodeError(err error, v any, data []byte) error {
	var mbe *http.MaxBytesError
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &mbe):
		return err // 413 through asError
	case errors.Is(err, io.EOF):
		return BadRequest("body", "the request body is empty; send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return BadRequest("body", "the body ends before its JSON value is complete")
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return BadRequest(field, fmt.Sprintf("%s must be %s, not %s", field, jsonKind(te.Type), te.Value))
	case errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth"):
		return BadRequest("body", fmt.Sprintf("the body nests objects and arrays more than 10000 levels deep (at byte %d); send a flatter JSON value", se.Offset))
	case errors.As(err, &se):
		return BadRequest("body", fmt.Sprintf("the body is not valid JSON (at byte %d): %v", se.Offset, err))
	}
	// encoding/json reports an unknown field only by its message.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return unknownFieldError(strings.Trim(name, `"`), v, data)
	}
	return BadRequest("body", "the body is not valid JSON: "+err.Error())
}

// jsonKind describes a Go type as the JSON value it decodes from.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value of the documented type"
}

// jsonFields lists the JSON names of the fields of the struct v points to.
func jsonFields(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	return structFields(t)
}

// jsonField is a struct field under the name encoding/json reads it by.
type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFieldCache holds jsonFieldsOf's answer per struct type (a request type's
// fields are read for every key of every body).
var jsonFieldCache sync.Map // reflect.Type -> []jsonField

// jsonFieldsOf lists struct type t's fields as encoding/json names them, in
// order: the tag's name, else the Go name; the fields of an embedded struct
// without a name are promoted; "-" and unexported fields are left out.
func jsonFieldsOf(t reflect.Type) []jsonField {
	if v, ok := jsonFieldCache.Load(t); ok {
		return v.([]jsonField)
	}
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
			continue
		case name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonFieldsOf(f.Type)...) // promoted fields
			continue
		case !f.IsExported():
			continue
		case name == "":
			name = f.Name
		}
		out = append(out, jsonField{name: name, typ: f.Type})
	}
	jsonFieldCache.Store(t, out)
	return out
}

func structFields(t reflect.Type) []string {
	fields := jsonFieldsOf(t)
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f.name
	}
	return out
}

// JSONContentType refuses with 415 a request whose Content-Type names a media type
// other than application/json (text/plain, a form, ...): the body would be read as
// JSON whatever the client meant. Parameters (charset) and the case of the type do
// not matter. A request without a Content-Type is accepted (a bare client may send
// none). Call it before DecodeJSON in handlers that read a JSON body, so that every
// service answers the same mistake the same way.
func JSONContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if strings.TrimSpace(ct) == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err == nil && mt == "application/json" {
		return nil
	}
	if err != nil {
		mt = ct
	}
	return &Error{Status: http.StatusUnsupportedMediaType, Title: "unsupported media type", Field: "Content-Type",
		Detail: fmt.Sprintf("send the body as JSON with Content-Type: application/json, not %s", clipText(mt, 80))}
}
