package extract

import (
	"fmt"
	"slices"
	"testing"
)

// mentionTypes extracts one chunk and returns entity id → type for its mentions.
func mentionTypes(t *testing.T, x *Extractor, text string) map[string]string {
	t.Helper()
	res := x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: text}}})
	types := map[string]string{}
	for _, e := range res.Entities {
		types[e.ID] = e.Type
	}
	got := map[string]string{}
	for _, m := range res.Mentions {
		got[m.EntityID] = types[m.EntityID]
	}
	return got
}

func TestPatternRules(t *testing.T) {
	x := newTestExtractor(t)
	tests := []struct {
		name   string
		text   string
		want   map[string]string // id → type
		absent []string
	}{
		{"gazetteer alias", "We run Postgres behind PgBouncer.", map[string]string{"postgresql": "database", "pgbouncer": "tool"}, nil},
		{"code span identifier", "Set `maxsize` to bound the cache.", map[string]string{"maxsize": "identifier"}, nil},
		{"code span class and exception", "Catch `ConnectionTimeoutError` raised by `RetryPolicy`.",
			map[string]string{"connectiontimeouterror": "exception", "retrypolicy": "class"}, nil},
		{"camel case in prose", "The FooBarClient wraps the socket.", map[string]string{"foobarclient": "class"}, nil},
		{"snake case in prose", "Raise work_mem_limit for big sorts.", map[string]string{"work_mem_limit": "identifier"}, nil},
		{"snake case config cue", "The setting checkpoint_flush_after controls writeback.", map[string]string{"checkpoint_flush_after": "config_setting"}, nil},
		{"dotted function known", "Call os.path.join() to build paths.", map[string]string{"os.path.join": "function"}, nil},
		{"dotted function unknown", "Use `yaml.safe_load()` for untrusted input.", map[string]string{"yaml.safe_load": "function"}, nil},
		{"method on a class", "`Path.read_text()` reads a file.", map[string]string{"path.read_text": "method"}, nil},
		{"attribute of a module", "Inspect `sys.path` at start-up.", map[string]string{"sys.path": "attribute"}, nil},
		{"function call in prose", "Then frobnicate() is called twice.", map[string]string{"frobnicate": "function"}, nil},
		{"acronym after expansion", "The Quantum Flux Capacitor (QFC) stores charge. The QFC is small.",
			map[string]string{"quantum-flux-capacitor": "concept"}, []string{"qfc"}},
		{"expansion after acronym", "Enable BLK (Block Level Keying) first.", map[string]string{"block-level-keying": "concept"}, []string{"blk"}},
		{"known acronym expansion", "Write-Ahead Logging (WAL) is on.", map[string]string{"write-ahead-log": "concept"}, nil},
		{"version", "Python 3.11 and TLS 1.3 are required; PostgreSQL 16 too.",
			map[string]string{"python-3.11": "version", "python": "programming_language", "tls-1.3": "version", "postgresql-16": "version"}, nil},
		{"status code is not a version", "The server answers HTTP 404 here.", map[string]string{"http": "protocol"}, []string{"http-404"}},
		{"command with prompt", "Run `$ pip install requests` first.", map[string]string{"pip-install": "command", "pip": "package_manager"}, nil},
		{"command without prompt", "Then `git commit -m msg` records it.", map[string]string{"git-commit": "command"}, nil},
		{"hyphenated command", "Generate a key with `ssh-keygen`.", map[string]string{"ssh-keygen": "command"}, nil},
		{"cli flag", "Pass `--no-cache-dir` to save space.", map[string]string{"no-cache-dir": "cli_option"}, nil},
		{"env var known", "Export PYTHONPATH before running.", map[string]string{"pythonpath": "environment_variable"}, nil},
		{"env var dollar", "The value of $MY_APP_SETTINGS_X is read.", map[string]string{"my_app_settings_x": "environment_variable"}, nil},
		{"env var suffix", "Set SERVICE_HOME and SERVICE_PORT.", map[string]string{"service_home": "environment_variable", "service_port": "environment_variable"}, nil},
		{"constant", "The limit is MAX_RETRY_COUNT.", map[string]string{"max_retry_count": "constant"}, nil},
		{"file names", "Edit setup.py and `config/app.toml`, then /etc/hosts.",
			map[string]string{"setup.py": "file", "config-app.toml": "file", "etc-hosts": "file"}, nil},
		{"special file", "The `Dockerfile` copies the app.", map[string]string{"dockerfile": "file"}, nil},
		{"url host", "See https://www.python.org/downloads/ for builds.", map[string]string{"python.org": "url"}, nil},
		{"standards by number", "PEP 8 and RFC 9110 and CVE-2023-12345 matter; CVE-2021-44228 is Log4Shell.",
			map[string]string{"pep-8": "standard", "rfc-9110": "standard", "cve-2023-12345": "vulnerability", "log4shell": "vulnerability"}, nil},
		{"capitalised multi-word once", "Deploy with the Quorix Vortanix today.", nil, []string{"quorix-vortanix"}},
		{"capitalised multi-word that recurs", "Deploy the Quorix Vortanix. The Quorix Vortanix is fast.", map[string]string{"quorix-vortanix": "concept"}, nil},
		{"capitalised multi-word with a head word", "Deploy the Quorix Vortanix Foundation today.", map[string]string{"quorix-vortanix-foundation": "foundation"}, nil},
		{"capitalised everyday words need support", "Deploy with the Quorix Control Plane.", nil, []string{"quorix-control-plane"}},
		{"capitalised everyday words that recur", "The Quorix Control Plane is new. Quorix Control Plane runs it.",
			map[string]string{"quorix-control-plane": "concept"}, nil},
		{"imperative verb is not part of a name", "Install PostgreSQL. Configure Nginx next.",
			map[string]string{"postgresql": "database", "nginx": "web_server"}, []string{"install-postgresql"}},
		{"head word types a name", "Redis Sentinel watches the primary.", map[string]string{"redis-sentinel": "software"}, nil},
		{"plural of a generic name", "B-trees and hash tables are common.", map[string]string{"b-tree": "data_structure", "hash-table": "data_structure"}, nil},
		{"everyday words are not names", "Go to the page, make sure it is set and copy the time it takes.",
			nil, []string{"go", "make", "set", "copy", "time"}},
		{"capitalised everyday word at sentence start", "Make sure the file exists. Express your intent.",
			nil, []string{"make", "express"}},
		{"everyday word as a name", "Go is a language; Rust and Make are tools people like.",
			map[string]string{"go": "programming_language", "rust": "programming_language", "make": "build_tool"}, nil},
		{"code-only names need code", "Pick a random item from the list.", nil, []string{"random", "list"}},
		{"code-only names in code", "Use `random.choice` on a `list`.", map[string]string{"random.choice": "function", "list": "data_type"}, nil},
		{"module cue", "The logging module writes records.", map[string]string{"logging": "module"}, nil},
		{"one-letter language", "The core is written in C and R bindings exist.", map[string]string{"c": "programming_language", "r": "programming_language"}, nil},
		{"one-letter not a language", "Option C is best.", nil, []string{"c"}},
		{"plural module is not the module", "It runs subprocesses.", nil, []string{"subprocess"}},
		{"unknown acronym needs support", "The XQZ layer is new.", nil, []string{"xqz"}},
		{"unknown acronym that recurs", "The XQZ layer is new. XQZ is fast.", map[string]string{"xqz": "concept"}, nil},
		{"value after = is not a name", "Pass `check=True` to fail loudly.", map[string]string{"check": "identifier"}, []string{"true"}},
		{"unicode text", "Die Datenbank läuft mit PostgreSQL unter Debian — schnell. 数据库 Redis 很快。", map[string]string{"postgresql": "database", "debian": "operating_system", "redis": "database"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mentionTypes(t, x, tt.text)
			for id, typ := range tt.want {
				if g, ok := got[id]; !ok {
					t.Errorf("%q: mention %s missing; got %v", tt.text, id, got)
				} else if g != typ {
					t.Errorf("%q: type of %s: got %s, want %s", tt.text, id, g, typ)
				}
			}
			for _, id := range tt.absent {
				if _, ok := got[id]; ok {
					t.Errorf("%q: got a mention of %s (%s), want none", tt.text, id, got[id])
				}
			}
		})
	}
}

func TestAcronymExpansionMatching(t *testing.T) {
	tests := []struct {
		words   []string
		acronym string
		want    bool
	}{
		{[]string{"write", "ahead", "log"}, "WAL", true},
		{[]string{"multiversion", "concurrency", "control"}, "MVCC", true},
		{[]string{"python", "package", "index"}, "PyPI", true},
		{[]string{"dns", "over", "https"}, "DoH", true},
		{[]string{"domain", "name", "system"}, "DNS", true},
		{[]string{"support", "vector", "machines"}, "SVMs", true},
		{[]string{"internet", "of", "things"}, "IoT", true},
		{[]string{"write", "ahead", "log"}, "WAX", false},
		{[]string{"log"}, "WAL", false},
	}
	for _, tt := range tests {
		t.Run(tt.acronym, func(t *testing.T) {
			if got := expansionSpells(tt.words, acronymLetters(tt.acronym)); got != tt.want {
				t.Errorf("expansionSpells(%v, %s): got %v, want %v", tt.words, tt.acronym, got, tt.want)
			}
		})
	}
}

func TestAcronymDefinesDocumentAlias(t *testing.T) {
	x := newTestExtractor(t)
	res := x.Document(Document{ID: "d", Chunks: []Chunk{
		{ID: "c1", Text: "We use the Frobnication Queue Protocol (FQP) for jobs."},
		{ID: "c2", Text: "Every worker speaks FQP."},
	}})
	var ent *Entity
	for i := range res.Entities {
		if res.Entities[i].ID == "frobnication-queue-protocol" {
			ent = &res.Entities[i]
		}
	}
	if ent == nil {
		t.Fatalf("entities: got %+v, want frobnication-queue-protocol", res.Entities)
	}
	if ent.Type != "protocol" || ent.Source != SourceAcronym || !slices.Contains(ent.Aliases, "FQP") {
		t.Errorf("entity: got %+v, want a protocol from an acronym with alias FQP", *ent)
	}
	chunks := map[string]bool{}
	for _, m := range res.Mentions {
		if m.EntityID == ent.ID {
			chunks[m.ChunkID] = true
		}
	}
	if !chunks["c1"] || !chunks["c2"] {
		t.Errorf("mention chunks: got %v, want c1 and c2", chunks)
	}
}

func TestIsVersion(t *testing.T) {
	for _, s := range []string{"3", "3.11", "1.2.3", "v2", "3.x", "2.0rc1", "16"} {
		if !isVersion(s) {
			t.Errorf("isVersion(%q): got false, want true", s)
		}
	}
	for _, s := range []string{"", "x", "1..2", "1.2.3.4.5", "12345", "3a.1", "v"} {
		if isVersion(s) {
			t.Errorf("isVersion(%q): got true, want false", s)
		}
	}
}

func TestMentionOffsets(t *testing.T) {
	x := newTestExtractor(t)
	text := "Ünïcödé first: PostgreSQL uses a write-ahead log (WAL); see `os.path.join()` and Python 3.11."
	res := x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: text}}})
	want := map[string][]string{
		"postgresql":      {"PostgreSQL"},
		"write-ahead-log": {"write-ahead log", "WAL"},
		"os.path.join":    {"os.path.join"},
		"python-3.11":     {"Python 3.11"},
	}
	got := map[string][]string{}
	for _, m := range res.Mentions {
		for _, o := range m.Offsets {
			got[m.EntityID] = append(got[m.EntityID], text[o.Start:o.End])
		}
	}
	for id, w := range want {
		if fmt.Sprint(got[id]) != fmt.Sprint(w) {
			t.Errorf("surfaces of %s: got %q, want %q", id, got[id], w)
		}
	}
}
