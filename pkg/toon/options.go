package toon

import "fmt"

// Option configures encoding and decoding. Options that do not apply to an
// operation (for example WithStrict when encoding) are ignored by it.
type Option func(*config)

// Key folding and path expansion modes accepted by WithKeyFolding and
// WithExpandPaths.
const (
	ModeOff  = "off"
	ModeSafe = "safe"
)

type config struct {
	indent       int
	delim        byte
	keyFolding   bool
	flattenDepth int
	strict       bool
	expandPaths  bool
	err          error
}

const unlimitedDepth = int(^uint(0) >> 1)

func defaultConfig() config {
	return config{indent: 2, delim: ',', flattenDepth: unlimitedDepth, strict: true}
}

func newConfig(opts []Option) (config, error) {
	c := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c, c.err
}

func (c *config) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// WithIndent sets the number of spaces per indentation level (default 2).
// The decoder uses it to compute depth; in strict mode every indentation must
// be an exact multiple of it.
func WithIndent(n int) Option {
	return func(c *config) {
		if n < 1 {
			c.fail(fmt.Errorf("toon: indent must be at least 1, got %d", n))
			return
		}
		c.indent = n
	}
}

// WithDelimiter selects the document delimiter used by the encoder for
// inline arrays and tabular rows: ',' (default), '\t' or '|'.
func WithDelimiter(r rune) Option {
	return func(c *config) {
		switch r {
		case ',', '\t', '|':
			c.delim = byte(r)
		default:
			c.fail(fmt.Errorf("toon: delimiter must be ',', '\\t' or '|', got %q", r))
		}
	}
}

// WithKeyFolding enables key folding in the encoder: "off" (default) or
// "safe", which collapses chains of single-key objects into dotted keys
// such as a.b.c: 1 when every segment is an identifier and the folded key
// does not collide with a sibling.
func WithKeyFolding(mode string) Option {
	return func(c *config) {
		switch mode {
		case ModeOff, "":
			c.keyFolding = false
		case ModeSafe:
			c.keyFolding = true
		default:
			c.fail(fmt.Errorf("toon: key folding mode must be %q or %q, got %q", ModeOff, ModeSafe, mode))
		}
	}
}

// WithFlattenDepth limits the number of segments a folded key may have
// (default unlimited). Values below 2 disable folding in practice.
func WithFlattenDepth(n int) Option {
	return func(c *config) {
		if n < 0 {
			c.fail(fmt.Errorf("toon: flatten depth must not be negative, got %d", n))
			return
		}
		c.flattenDepth = n
	}
}

// WithStrict turns strict decoding on (default) or off. Strict mode rejects
// count and width mismatches, bad indentation, blank lines inside arrays,
// duplicate keys and path-expansion conflicts; lenient mode accepts them
// where the specification allows (last write wins for duplicates).
func WithStrict(strict bool) Option {
	return func(c *config) { c.strict = strict }
}

// WithExpandPaths enables path expansion in the decoder: "off" (default) or
// "safe", which turns unquoted dotted keys whose segments are identifiers
// into nested objects, the inverse of key folding.
func WithExpandPaths(mode string) Option {
	return func(c *config) {
		switch mode {
		case ModeOff, "":
			c.expandPaths = false
		case ModeSafe:
			c.expandPaths = true
		default:
			c.fail(fmt.Errorf("toon: expand paths mode must be %q or %q, got %q", ModeOff, ModeSafe, mode))
		}
	}
}
