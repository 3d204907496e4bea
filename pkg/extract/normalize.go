package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Key returns the canonical key of a name: the type-independent form that makes
// one thing one entity. It is also the entity id, so it is safe in a URL path.
//
//   - letters are lower-cased (Unicode), digits kept;
//   - spaces, hyphens, dashes, slashes, colons and brackets become one '-'
//     ("Write-Ahead Log", "write ahead log" and "write-ahead-log" agree;
//     "HTTP/2" becomes "http-2");
//   - '.', '_' and '@' are kept, since they carry meaning in identifiers
//     ("os.path.join", "max_connections", "@property");
//   - "++" becomes "pp", '+' "plus", '#' "sharp", '*' "star" ("C++" is "cpp",
//     "C#" is "csharp"), and apostrophes are dropped ("Dijkstra's");
//   - a leading '$' (shell variables) and trailing "()" (calls) are dropped;
//   - everything else is removed, and '-' never starts or ends a key.
//
// Plurals are not folded here; see singular.
func Key(name string) string {
	s := strings.TrimSpace(name)
	s = strings.TrimPrefix(s, "$")
	s = strings.TrimPrefix(s, "{")
	for strings.HasSuffix(s, "()") {
		s = strings.TrimSuffix(s, "()")
	}
	var b strings.Builder
	b.Grow(len(s) + 4)
	sep := false
	emit := func(r rune) {
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteRune(r)
	}
	emitStr := func(t string) {
		if sep && b.Len() > 0 {
			b.WriteByte('-')
		}
		sep = false
		b.WriteString(t)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1:
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			emit(unicode.ToLower(r))
		case r == '.' || r == '_' || r == '@':
			// A dot directly before a separator or at the end is punctuation.
			if r == '.' && (i >= len(s) || isSepByte(s[i])) {
				continue
			}
			emit(r)
		case r == '+':
			if i < len(s) && s[i] == '+' {
				i++
				emitStr("pp")
			} else {
				emitStr("plus")
			}
		case r == '#':
			emitStr("sharp")
		case r == '*':
			emitStr("star")
		case r == '\'' || r == '’' || r == '$' || r == '!' || r == '?' || r == '"' || r == '`':
			continue
		case r == '&':
			sep = true
			emitStr("and")
			sep = true
		case unicode.IsSpace(r) || r == '-' || r == '/' || r == ':' || r == ',' || r == ';' ||
			r == '(' || r == ')' || r == '[' || r == ']' || r == '{' || r == '}' || r == '|' ||
			r == '=' || r == '<' || r == '>' || r == '\\' || r == '~' || r == '%' ||
			isDash(r):
			sep = true
		default:
			// Other symbols and marks carry no identity.
		}
	}
	return strings.TrimRight(strings.TrimLeft(b.String(), "-"), "-.")
}

func isSepByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '-', '/', ':', ',', ';', '(', ')', '[', ']', '{', '}':
		return true
	}
	return false
}

func isDash(r rune) bool {
	switch r {
	case '‐', '‑', '‒', '–', '—', '―', '−':
		return true
	}
	return false
}

// singular returns key with its last '-'-separated word made singular by the
// regular English rules, or "" when the word does not look plural. It is only
// ever used as a second lookup, or for names no dictionary knows.
func singular(key string) string {
	i := strings.LastIndexByte(key, '-')
	head, w := key[:i+1], key[i+1:]
	if len(w) < 4 || !isLowerAlpha(w) || !strings.HasSuffix(w, "s") {
		return ""
	}
	switch {
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us") && len(w) >= 5, strings.HasSuffix(w, "is"),
		w == "series", w == "species", w == "news", w == "has", w == "does", w == "was":
		return ""
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return head + w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"), strings.HasSuffix(w, "xes"), strings.HasSuffix(w, "shes"),
		strings.HasSuffix(w, "ches") && !strings.HasSuffix(w, "aches"):
		return head + w[:len(w)-2]
	}
	return head + w[:len(w)-1]
}

func isLowerAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

// isCommonWord reports whether a one-word key is an everyday English word, which a
// gazetteer may only match with stronger evidence (its written case, or code).
func isCommonWord(key string) bool {
	_, ok := commonWords[key]
	return ok
}

var commonWords = func() map[string]struct{} {
	m := make(map[string]struct{}, 1200)
	for _, w := range strings.Fields(commonWordList) {
		m[w] = struct{}{}
	}
	return m
}()

// commonWordList holds everyday English words (plus a few generic technical nouns)
// that are also the name of some tool, module or type. The list is general: it
// was written from English vocabulary, not from any evaluation text.
const commonWordList = `
a about above across act action add address after again against age agent air all also always an and animal answer any apt area arm
around array arrow art as ask at attrs away back backup bad ball bandwidth bank base basic be bear beat because bed before begin being
below best better between big bill bind bird bit black block blue board boat body bond book boost boot bootstrap both bottle box boy
bread break bridge bright bring brown build bun burn business but buy by cache call can capital car card care carry case cat catch cause
cell center chain chair chance change character charge chart check checkpoint chef chief child choice chroma circle city class clean
clear click clock close closure cloud club coach code cold color column come common company compass complex composer compression
condition connection consistency consul control cook cookie copy corner cost count country course cover crash create cross crown
cucumber current cursor curses cut cycle cypress daemon dance dark dash data date day dead deal dear decimal deep deployment
description descriptor design detail develop dictionary difference dig direct direction discover dispatch distance do document dog
door double down draw dream dress drive drop dropout drum dry durability during each early earth ease east echo edge effect egg eight
either electron else email empty end engine enough enter enum envoy equal error even evening event ever every exact example except
exception exercise expect express eye face fact fail fall family far farm fast father fear feature feel few field fig figure file
fill final find fine finger fire first fish fit five flag flask flat flit floor flow flower fly follow food foot for force forest form
format forward found four fox fraction fractions frame free fresh friend from front fruit full future game garden gate general
generator gentle get gift girl give glad glass glob go gold good govern grand graph grass great green ground group grow guard guess
guide gun hair half hall hand handler happen happy hard harbor hash hatch have he head hear heart heartbeat heat heavy help helm her
here hero hey high hill him his history hit hive hold hole home hook hope horse host hot hour house how huge human hundred hunt
hypothesis ice idea if image in inch include inference inheritance input insect inside insomnia inspect instance interest interpreter
interrupt into iron island it item jasmine jest job join joy judge jump just keep key keyword kill kind king kitchen knot know lady
lake land language large last late laugh launch law lay lead learn leave left leg length less let letter level lie life lifetime
light like line lion list listen little live local locale lock log logging long look lost lot love low luck lunch machine magic
main major make man many map march mark market marshal master match matter may me mean measure meat meet member memory men method
middle might mile milk million mind mine minute mirror miss mocha mocking model modern money month moon more morning most mother
motion mountain mouse move much music must my name nation native natural near need never new news next nice night nine no noise
none normalization north nose not note nothing notice now number numbers object ocean of off offer office often oil old on once
one only open operator option or order other our out over own owner ownership packer packet page pain paint pair paper parent
park part party pass past path pattern pay peace people perfect period person perplexity pick picture piece pillow pipe place plain
plan plane plant platform play please plural poem poetry point pole poor port position possible post pound power present press
presto pretty print probable problem process produce product profiling program project property protocol provide pruning pull
puppet pure push put pyramid quart question queue quick quiet quite race radio rain raise range ray reach read ready real reason
receive record red reflection region remember render renovate repeat reply report request requests rest result return rich ride
right ring rise river road rock rocket roll room root rope rose round route routing row rule run safe sail salt same sand save say
scale school science score scoop screen sea season seat second secrets section see seed select self sell send sense sentence sentry
serial series serve service session set settle seven several shall shape share sharp she ship shop short should shoulder show
side sight sign signal silent silver simple since sing single sister sit site six size skill skin sky sleep slice slow small smell
smile snapshot snow so soft soil soldier some son song soon sound south space speak special speed spell spend spirit spot spring
square stack stand star start stat state statement station statistics stay steam steel step stick still stone stop store story
straight strange stream street string strong struct student study subject substance success such sudden sugar suggest suit summer
sun supervisor supply sure surface surprise swift symbol system table tail take talk target task tea teach team tell temperature
ten term test than thank that the their them then there these they thick thin thing think third this those though thought thousand
three through throw tie tilt time tiny to today together token tone too tool top total touch toward tower town track trade train
travel tree trial trio triangle trip trouble truck true try tube turn turtle twenty two type under unit unity until up upon us use
usual valley value vault vector very view village visit voice vowel wait walk wall want war warm warnings wash watch water wave way
we wear weather week weight well west what wheel when where which while white who whole why wide wife wild will win wind window
wing winter wire wish with woman wonder wood word work worker world would write wrong yard year yes yet you young zero
authentication authorization concurrent resource optional literal generic final union timer logger formatter counter engine types random math socket isolation atomicity accessibility wildcard quorum tombstone hallucination jitter backup cursor
interpreter macro parser pipe paging routing salt lifetime inheritance closure generator descriptor introspection checkpoint
`
