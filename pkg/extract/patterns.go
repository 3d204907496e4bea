package extract

import (
	"strings"
	"unicode"
)

// pattern applies the rules for names no dictionary knows, at atom i. It returns
// the number of atoms consumed (0 when no rule fired).
func (m *matcher) pattern(i int) int {
	a := m.c.atoms
	at := a[i]
	t := at.text
	if !hasLetter(t) || placeholderNames[strings.ToLower(t)] {
		return 0
	}
	if n := m.numbered(i); n > 0 {
		return n
	}
	inCode := at.code >= 0
	if inCode {
		if b := runeBefore(m.c.text, at.start); b == '=' {
			return 0 // a value, not a name
		}
	}
	emit := func(name, typ string, conf float64) int {
		rm := m.patternMention(i, i, name, typ, conf)
		if typ == "function" || typ == "method" || typ == "attribute" || typ == "class" || typ == "constant" {
			if p := parentName(name); p != "" {
				rm.parentKey = m.x.Resolve(p)
			}
		}
		m.out = append(m.out, rm)
		a[i].used = true
		return 1
	}
	switch {
	case strings.HasPrefix(t, "--") && len(t) > 3:
		if inCode && !isPlaceholderFlag(t) {
			return emit(t, "cli_option", 0.75)
		}
		return 0
	case strings.HasPrefix(t, "-"):
		return 0
	case isEnvName(t) && (at.dollar || envLike(t) || m.sentenceHas(i, "environment")):
		return emit(t, "environment_variable", 0.85)
	case isUpperSnake(t):
		return emit(t, "constant", 0.6)
	case strings.Contains(t, "."):
		if typ, conf := m.dotted(i); typ != "" {
			return emit(t, typ, conf)
		}
		return 0
	case specialFiles[t]:
		return emit(t, "file", 0.85)
	case at.call && isIdent(t) && len(t) > 1 && !(m.inBlock(i) && isProseWord(t)):
		if unicode.IsUpper(runeAt(t, 0)) {
			return emit(t, "class", 0.75)
		}
		return emit(t, "function", 0.8)
	case isCamel(t):
		lower := strings.ToLower(t)
		switch {
		case strings.HasSuffix(lower, "error") || strings.HasSuffix(lower, "exception"):
			return emit(t, "exception", 0.85)
		case strings.HasSuffix(lower, "warning"):
			return emit(t, "exception", 0.8)
		case inCode:
			return emit(t, "class", 0.8)
		case unicode.IsLower(runeAt(t, 0)) || hasUpperPair(t):
			return emit(t, "software", 0.6)
		}
		return emit(t, "class", 0.6)
	case strings.Contains(t, "_") && isIdent(t):
		if inCode && m.nextByte(i) == '=' || m.sentenceHasAny(i, configCues) {
			return emit(t, "config_setting", 0.75)
		}
		return emit(t, "identifier", 0.7)
	case inCode && isIdent(t):
		lower := strings.ToLower(t)
		block := m.inBlock(i)
		if len(t) < 3 || functionWords[lower] || block && isPlainWord(t) {
			// a code block: only tokens shaped like identifiers (or known,
			// or called) are names; the rest is keywords and local variables
			return 0
		}
		if m.nextByte(i) == '=' && !placeholderNames[lower] {
			return emit(t, "identifier", 0.7) // a keyword argument: check=True
		}
		if isProseWord(t) {
			return 0 // an everyday word in code names nothing on its own
		}
		if isCommonWord(lower) || functionWords[lower] {
			return 0
		}
		if isAllUpper(t) {
			return emit(t, "identifier", 0.6)
		}
		return emit(t, "identifier", 0.65)
	case !inCode && isAcronymLike(t):
		rm := m.patternMention(i, i, t, "concept", confCand)
		rm.candidate = true
		m.out = append(m.out, rm)
		a[i].used = true
		return 1
	}
	return 0
}

var configCues = []string{"setting", "settings", "parameter", "parameters", "directive", "configuration", "config", "option"}

// inBlock reports whether atom i is inside a multi-line code region.
func (m *matcher) inBlock(i int) bool {
	c := m.c.atoms[i].code
	if c < 0 {
		return false
	}
	return m.c.regions[c].block
}

func (m *matcher) nextByte(i int) byte {
	e := m.c.atoms[i].end
	for e < len(m.c.text) && m.c.text[e] == ' ' {
		e++
	}
	if e < len(m.c.text) {
		return m.c.text[e]
	}
	return 0
}

func (m *matcher) sentenceHas(i int, word string) bool {
	return m.sentenceHasAny(i, []string{word})
}

func (m *matcher) sentenceHasAny(i int, words []string) bool {
	a := m.c.atoms
	s := a[i].sent
	for k := i - 1; k >= 0 && a[k].sent == s && i-k < 12; k-- {
		for _, w := range words {
			if strings.EqualFold(a[k].text, w) {
				return true
			}
		}
	}
	for k := i + 1; k < len(a) && a[k].sent == s && k-i < 12; k++ {
		for _, w := range words {
			if strings.EqualFold(a[k].text, w) {
				return true
			}
		}
	}
	return false
}

// numbered recognises "PEP 8", "RFC 9110", "ISO 27001" and "CVE-2021-44228".
func (m *matcher) numbered(i int) int {
	a := m.c.atoms
	t := a[i].text
	if !m.sameSentence(i, i+1) {
		return 0
	}
	next := a[i+1]
	gap := m.c.text[a[i].end:next.start]
	switch t {
	case "PEP", "RFC", "ISO", "ECMA", "BIP", "JSR", "KEP", "RFC-":
		if (gap == " " || gap == "-") && isDigits(next.text) {
			name := t + " " + next.text
			m.out = append(m.out, m.patternMention(i, i+1, name, "standard", 0.9))
			a[i].used, a[i+1].used = true, true
			return 2
		}
	case "CVE":
		if gap == "-" && isDigits(next.text) && m.sameSentence(i, i+2) && m.c.text[next.end:a[i+2].start] == "-" && isDigits(a[i+2].text) {
			name := m.spanText(i, i+2)
			m.out = append(m.out, m.patternMention(i, i+2, name, "vulnerability", 0.9))
			a[i].used, a[i+1].used, a[i+2].used = true, true, true
			return 3
		}
	}
	return 0
}

// dotted types a qualified name such as os.path.join, Path.read_text or
// setup.py.
func (m *matcher) dotted(i int) (string, float64) {
	at := m.c.atoms[i]
	t := at.text
	inCode := at.code >= 0
	if strings.HasPrefix(t, ".") {
		rest := strings.ToLower(t[1:])
		if inCode && (knownExts[rest] || isIdent(rest) && !strings.Contains(rest, ".") && !isProseWord(rest)) {
			return "file", 0.6 // .bashrc, .env; not .keys (a method) or .17f (a format)
		}
		return "", 0
	}
	segs := strings.Split(t, ".")
	for _, s := range segs {
		if s == "" || !isIdent(s) {
			return "", 0
		}
	}
	last, first := segs[len(segs)-1], segs[0]
	if placeholderNames[strings.ToLower(first)] {
		return "", 0 // spam.eggs, foo.bar()
	}
	firstInfo, _ := m.x.lookup(Key(first))
	codeOwner := firstInfo != nil && codeOwnerTypes[firstInfo.e.typ]
	if !at.call && knownExts[strings.ToLower(last)] && !(weakExts[strings.ToLower(last)] && codeOwner) {
		return "file", 0.8
	}
	if firstInfo == nil && len(first) <= 2 && !unicode.IsUpper(runeAt(first, 0)) {
		return "", 0 // a short example variable: c.update(), p._replace()
	}
	if !inCode && !at.call {
		for _, s := range segs {
			if len(s) < 2 {
				return "", 0 // e.g, i.e, U.S
			}
		}
		if strongTLDs[last] {
			return "url", 0.7
		}
		if tlds[last] {
			if info, _ := m.x.lookup(Key(first)); info == nil {
				return "url", 0.7
			}
		}
	}
	switch {
	case at.call && unicode.IsUpper(runeAt(first, 0)):
		return "method", 0.85
	case at.call:
		return "function", 0.85
	case isAllUpper(last) && len(last) > 1:
		return "constant", 0.7
	case unicode.IsUpper(runeAt(last, 0)):
		return "class", 0.75
	}
	if codeOwner {
		return "attribute", 0.7
	}
	if inCode {
		if isLowerAlphaNum(last) && len(last) >= 2 && len(last) <= 8 && len(segs) == 2 && !unicode.IsUpper(runeAt(first, 0)) {
			return "file", 0.6
		}
		return "identifier", 0.6
	}
	return "identifier", 0.55
}

func parentName(name string) string {
	k := strings.LastIndexByte(name, '.')
	if k <= 0 {
		return ""
	}
	return name[:k]
}

func hasLetter(s string) bool {
	for _, r := range s {
		if unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isLowerAlphaNum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return s != ""
}

// isIdent: letters, digits and underscores, not starting with a digit.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(unicode.IsLetter(r) || r == '_' || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// isCamel: letters and digits, with a capital after a lower-case letter
// (PgBouncer, macOS, ValueError, GiST).
func isCamel(s string) bool {
	if !isIdent(s) || strings.Contains(s, "_") {
		return false
	}
	prevLower := false
	for _, r := range s {
		if unicode.IsUpper(r) && prevLower {
			return true
		}
		prevLower = unicode.IsLower(r)
	}
	return false
}

func hasUpperPair(s string) bool {
	prev := false
	for _, r := range s {
		up := unicode.IsUpper(r)
		if up && prev {
			return true
		}
		prev = up
	}
	return false
}

// isEnvName: upper-case letters, digits and underscores (PYTHONPATH, LC_ALL).
func isEnvName(s string) bool {
	if len(s) < 2 {
		return false
	}
	letters := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			letters++
		case c >= '0' && c <= '9' && i > 0, c == '_':
		default:
			return false
		}
	}
	return letters >= 2
}

func isUpperSnake(s string) bool { return isEnvName(s) && strings.Contains(s, "_") }

var envSuffixes = []string{"_HOME", "_PATH", "_DIR", "_URL", "_URI", "_HOST", "_PORT", "_TOKEN", "_KEY", "_SECRET",
	"_ENV", "_PROXY", "_LEVEL", "_MODE", "_CONFIG", "_FILE", "_USER", "_PASSWORD", "_REGION", "_DEBUG", "_OPTS", "_FLAGS", "_ROOT"}
var envPrefixes = []string{"PYTHON", "JAVA_", "NODE_", "NPM_", "KUBE", "AWS_", "AZURE_", "GCP_", "GOOGLE_", "LC_",
	"XDG_", "DOCKER_", "MYSQL_", "REDIS_", "PIP_", "CONDA_", "CARGO_", "RUST_", "HF_", "CUDA_", "GITHUB_", "CI_", "LD_"}

func envLike(s string) bool {
	for _, p := range envSuffixes {
		if strings.HasSuffix(s, p) {
			return true
		}
	}
	for _, p := range envPrefixes {
		if strings.HasPrefix(s, p) && len(s) > len(p)+1 {
			return true
		}
	}
	return false
}

// isAcronymLike: 2 to 6 characters, at least two capitals, letters and digits,
// an optional plural s (RDB, GiST, IVF, DoH).
func isAcronymLike(s string) bool {
	t := strings.TrimSuffix(s, "s")
	if len(t) < 2 || len(t) > 6 || acronymStop[t] {
		return false
	}
	upper := 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			return false
		}
	}
	lower := strings.ToLower(t)
	return upper >= 2 && t[0] >= 'A' && t[0] <= 'Z' && !isRoman(t) && !isCommonWord(lower) && !functionWords[lower]
}

func isRoman(s string) bool {
	return strings.Trim(s, "IVXLCDM") == ""
}

var acronymStop = map[string]bool{
	"API": true, "ID": true, "OK": true, "UI": true, "FAQ": true, "TODO": true, "NOTE": true, "TBD": true, "AM": true,
	"PM": true, "USD": true, "EUR": true, "KB": true, "MB": true, "GB": true, "TB": true, "PB": true, "KiB": true,
	"MiB": true, "GiB": true, "TiB": true, "FIXME": true, "XXX": true, "IMO": true, "FYI": true, "ASAP": true, "PS": true,
	"NB": true, "OR": true, "AND": true, "NOT": true, "IN": true, "IS": true, "IT": true, "US": true, "EOF": true,
	"YES": true, "NO": true, "ON": true, "OFF": true, "TRUE": true, "FALSE": true, "NULL": true, "NaN": true, "UTC": true,
	"GMT": true, "CEST": true, "PST": true, "EST": true, "HOWTO": true, "README": true, "WARN": true, "INFO": true,
	"ERROR": true, "DEBUG": true, "HTTPd": true, "URLs": true, "IDs": true, "APIs": true, "CLI": true,
}

var strongTLDs = map[string]bool{"com": true, "org": true, "net": true, "edu": true, "gov": true}

// codeOwnerTypes own attributes: sys.argv, np.pi.
var codeOwnerTypes = map[string]bool{"module": true, "library": true, "class": true, "framework": true,
	"ml_framework": true, "testing_framework": true, "data_type": true, "exception": true, "file_format": true}

var tlds = map[string]bool{"com": true, "org": true, "net": true, "edu": true, "gov": true, "dev": true, "io": true, "ai": true, "app": true}

var knownExts = map[string]bool{
	"py": true, "pyi": true, "pyc": true, "ipynb": true, "json": true, "yaml": true, "yml": true, "toml": true, "cfg": true,
	"ini": true, "conf": true, "txt": true, "md": true, "rst": true, "html": true, "htm": true, "css": true, "js": true,
	"mjs": true, "ts": true, "tsx": true, "jsx": true, "go": true, "mod": true, "sum": true, "rs": true, "java": true,
	"kt": true, "c": true, "h": true, "cpp": true, "hpp": true, "cc": true, "cs": true, "rb": true, "php": true, "sh": true,
	"bash": true, "zsh": true, "ps1": true, "sql": true, "csv": true, "tsv": true, "xml": true, "lock": true, "log": true,
	"env": true, "gz": true, "tgz": true, "tar": true, "zip": true, "whl": true, "so": true, "dll": true, "exe": true,
	"proto": true, "pem": true, "crt": true, "key": true, "service": true, "socket": true, "timer": true, "parquet": true,
	"pdf": true, "png": true, "jpg": true, "jpeg": true, "svg": true, "gif": true, "db": true, "sqlite": true, "sqlite3": true,
	"swift": true, "scala": true, "lua": true, "pl": true, "r": true, "jl": true, "vue": true, "svelte": true, "tf": true,
	"tfvars": true, "hcl": true, "dockerfile": true, "properties": true, "gradle": true, "xz": true, "bz2": true, "zst": true,
}

// weakExts are extensions that are also common attribute names (socket.socket,
// os.sep is not one, but x.log or x.key may be): with a module or class before
// them they name an attribute.
var weakExts = map[string]bool{"socket": true, "service": true, "timer": true, "key": true, "lock": true, "log": true,
	"env": true, "mod": true, "sum": true, "go": true, "c": true, "h": true, "r": true, "pl": true, "db": true, "so": true,
	"cc": true, "cs": true, "tf": true, "sql": true, "properties": true, "swift": true, "lua": true, "scala": true,
	"java": true, "json": true, "html": true, "xml": true, "csv": true}

var specialFiles = map[string]bool{
	"Dockerfile": true, "Makefile": true, "Containerfile": true, "Jenkinsfile": true, "Vagrantfile": true, "Procfile": true,
	"Gemfile": true, "Rakefile": true, "Pipfile": true, "Justfile": true, "Brewfile": true, "CMakeLists.txt": true,
	"GNUmakefile": true, "Caddyfile": true, "Tiltfile": true, "Earthfile": true,
}
