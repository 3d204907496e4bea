package toon_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kgsearch/kgsearch/pkg/toon"
)

func TestFromJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"key order kept", `{"z":1,"a":2,"m":3}`, "z: 1\na: 2\nm: 3"},
		{"big integer exact", `{"n":123456789012345678901234567890}`, "n: 1.2345678901234567890123456789e+29"},
		{"long integer below 1e21", `[9007199254740993]`, "[1]: 9007199254740993"},
		{"long decimal exact", `0.1000000000000000055511151231257827`, "0.1000000000000000055511151231257827"},
		{"exponent forms", `[1e6,1E-7,-0,-0.0,2.50,1e+21,0.000001]`, "[7]: 1000000,1e-7,0,0,2.5,1e+21,0.000001"},
		{"duplicate keys last wins", `{"a":1,"b":2,"a":3}`, "a: 3\nb: 2"},
		{"escapes", `{"s":"\u00e9\ud83d\ude80\n"}`, "s: \"é🚀\\n\""},
		{"lone surrogate replaced", `"\ud800"`, "\uFFFD"},
		{"tabular", `[{"id":1,"v":"a"},{"v":"b","id":2}]`, "[2]{id,v}:\n  1,a\n  2,b"},
		{"empty object root", `{}`, ""},
		{"whitespace", " \n[ 1 , 2 ]\t", "[2]: 1,2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toon.FromJSON([]byte(tt.in))
			if err != nil {
				t.Fatalf("FromJSON: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestFromJSONErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", ``, "unexpected end of input"},
		{"trailing", `{} x`, "after the top-level value"},
		{"leading zero", `01`, "after the top-level value"},
		{"bad literal", `tru`, "expected true"},
		{"unterminated", `"abc`, "unterminated string"},
		{"control char", "\"a\x01\"", "control character"},
		{"missing colon", `{"a" 1}`, "expected ':'"},
		{"trailing comma", `[1,]`, "unexpected ']'"},
		{"deep nesting", strings.Repeat("[", 20000), "nesting deeper"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := toon.FromJSON([]byte(tt.in))
			var je *toon.JSONSyntaxError
			if !errors.As(err, &je) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want *JSONSyntaxError containing %q", err, tt.want)
			}
		})
	}
}

func TestToJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		opts           []toon.Option
	}{
		{"order and numbers", "z: 1.50\na: -1E+03\nbig: 123456789012345678901234567890", `{"z":1.5,"a":-1000,"big":1.2345678901234567890123456789e+29}`, nil},
		{"tabular", "t[2]{b,a}:\n  1,x\n  2,\"y\"", `{"t":[{"b":1,"a":"x"},{"b":2,"a":"y"}]}`, nil},
		{"strings stay strings", `[3]: "1","true",05`, `["1","true","05"]`, nil},
		{"escaping", `s: "a\"b\\c\u0001"`, `{"s":"a\"b\\c\u0001"}`, nil},
		{"expand paths", "a.b: 1\na.c: 2", `{"a":{"b":1,"c":2}}`, []toon.Option{toon.WithExpandPaths("safe")}},
		{"empty doc", "", `{}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toon.ToJSON([]byte(tt.in), tt.opts...)
			if err != nil {
				t.Fatalf("ToJSON: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}
