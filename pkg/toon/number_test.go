package toon

import "testing"

func TestCanonicalNumber(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"-0.000", "0"}, {"0e10", "0"},
		{"1", "1"}, {"-7", "-7"}, {"10", "10"}, {"1.0", "1"}, {"1.50", "1.5"},
		{"1e6", "1000000"}, {"1E+6", "1000000"}, {"1.5e3", "1500"}, {"15e-1", "1.5"},
		{"0.000001", "0.000001"}, {"1e-6", "0.000001"}, {"1e-7", "1e-7"}, {"0.0000001", "1e-7"},
		{"-1.25e-8", "-1.25e-8"}, {"1e20", "100000000000000000000"}, {"1e21", "1e+21"},
		{"999999999999999999999", "999999999999999999999"}, {"1000000000000000000000", "1e+21"},
		{"123.456e2", "12345.6"}, {"0.5", "0.5"}, {"-0.5", "-0.5"}, {"00.5", "0.5"},
		{"1e999999999999", "1e999999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, _ := canonicalNumber(tt.in, nil)
			if got != tt.want {
				t.Errorf("canonicalNumber(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestScanNumber(t *testing.T) {
	tests := []struct {
		in          string
		ok, leading bool
	}{
		{"42", true, false}, {"-3.14", true, false}, {"1e-6", true, false}, {"05", true, true},
		{"-05", true, true}, {"0.5", true, false}, {"1.", false, false}, {".5", false, false},
		{"+1", false, false}, {"1e", false, false}, {"-", false, false}, {"1_000", false, false},
	}
	for _, tt := range tests {
		ok, lz := scanNumber(tt.in)
		if ok != tt.ok || lz != tt.leading {
			t.Errorf("scanNumber(%q) = %v, %v; want %v, %v", tt.in, ok, lz, tt.ok, tt.leading)
		}
	}
}
