package toon

import (
	"math"
	"strconv"
)

// scanNumber reports whether s is a number token per §4: an optional minus,
// digits, an optional fraction and an optional exponent. leadingZero is set
// when the integer part has a forbidden leading zero ("05"), in which case
// the decoder treats the token as a string. The grammar is the same one the
// encoder's numeric-like quoting rule uses.
func scanNumber(s string) (ok, leadingZero bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == start {
		return false, false
	}
	leadingZero = i-start > 1 && s[start] == '0'
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == fs {
			return false, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		es := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == es {
			return false, false
		}
	}
	return i == len(s), leadingZero
}

// isNumericLike is the §7.2 quoting test: /^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i.
func isNumericLike(s string) bool {
	ok, _ := scanNumber(s)
	return ok
}

// canonicalNumber rewrites a valid number token into the §2 canonical form:
// no exponent for 1e-6 <= |n| < 1e21, no leading or trailing zeros, -0 as 0,
// and otherwise d.ddde±x. The digits are kept exactly, so large integers and
// long decimals survive unchanged. dst is scratch space; the result may alias
// s when it is already canonical.
func canonicalNumber(s string, dst []byte) (string, []byte) {
	if fastCanonical(s) {
		return s, dst
	}
	neg := false
	i := 0
	if s[0] == '-' {
		neg = true
		i = 1
	}
	is := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart := s[is:i]
	frac := ""
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		frac = s[fs:i]
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if s[i] == '+' || s[i] == '-' {
			eneg = s[i] == '-'
			i++
		}
		for i < len(s) && s[i] == '0' {
			i++
		}
		if len(s)-i > 9 {
			return s, dst // absurd exponent: keep the text, it is still valid JSON
		}
		for ; i < len(s); i++ {
			exp = exp*10 + int(s[i]-'0')
		}
		if eneg {
			exp = -exp
		}
	}
	// value = 0.D × 10^e10 with digits D = intPart+frac stripped of zeros.
	dst = append(dst[:0], intPart...)
	dst = append(dst, frac...)
	e10 := len(intPart) + exp
	lead := 0
	for lead < len(dst) && dst[lead] == '0' {
		lead++
	}
	e10 -= lead
	digits := dst[lead:]
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		return "0", dst
	}
	out := make([]byte, 0, len(digits)+24)
	if neg {
		out = append(out, '-')
	}
	switch {
	case e10 >= -5 && e10 <= 21:
		switch {
		case e10 <= 0:
			out = append(out, '0', '.')
			for k := 0; k < -e10; k++ {
				out = append(out, '0')
			}
			out = append(out, digits...)
		case e10 >= len(digits):
			out = append(out, digits...)
			for k := len(digits); k < e10; k++ {
				out = append(out, '0')
			}
		default:
			out = append(out, digits[:e10]...)
			out = append(out, '.')
			out = append(out, digits[e10:]...)
		}
	default:
		out = append(out, digits[0])
		if len(digits) > 1 {
			out = append(out, '.')
			out = append(out, digits[1:]...)
		}
		out = append(out, 'e')
		x := e10 - 1
		if x < 0 {
			out = append(out, '-')
			x = -x
		} else {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(x), 10)
	}
	return string(out), dst
}

// fastCanonical reports whether s is already canonical without rewriting:
// an integer or plain decimal with no redundant zeros and not negative zero.
func fastCanonical(s string) bool {
	i := 0
	if s[0] == '-' {
		i = 1
	}
	if i >= len(s) {
		return false
	}
	if s[i] == '0' {
		// "0" alone, or "0.xxx" with a non-zero digit somewhere.
		if i+1 == len(s) {
			return i == 0
		}
		if s[i+1] != '.' {
			return false
		}
	}
	nonZero := false
	dot := -1
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case c >= '1' && c <= '9':
			nonZero = true
		case c == '0':
		case c == '.':
			dot = j
		default:
			return false
		}
	}
	if !nonZero {
		return false
	}
	if dot >= 0 {
		if s[len(s)-1] == '0' {
			return false
		}
		// 0.000001 is the smallest plain form; 0.0000001 needs an exponent.
		if s[i] == '0' {
			z := 0
			for j := dot + 1; j < len(s) && s[j] == '0'; j++ {
				z++
			}
			if z > 5 {
				return false
			}
		}
		if dot-i > 21 {
			return false
		}
	} else if len(s)-i > 21 {
		return false
	}
	return true
}

// appendFloat writes f in canonical form; NaN and infinities become null.
func appendFloat(b []byte, f float64, bitSize int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	if f == 0 {
		return append(b, '0')
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.AppendFloat(b, f, 'f', -1, bitSize)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'e', -1, bitSize)
	// Go writes e-07; the canonical form has no leading exponent zeros.
	for i := start; i < len(b); i++ {
		if b[i] == 'e' {
			j := i + 2 // after the sign
			k := j
			for k < len(b)-1 && b[k] == '0' {
				k++
			}
			if k > j {
				b = append(b[:j], b[k:]...)
			}
			break
		}
	}
	return b
}
