package extract

import (
	"sync"
	"testing"
)

func newTestExtractor(t testing.TB, opts ...Option) *Extractor {
	t.Helper()
	x, err := New(opts...)
	if err != nil {
		t.Fatalf("new extractor: %v", err)
	}
	return x
}

func TestKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"PostgreSQL", "postgresql"},
		{"  Write-Ahead  Log ", "write-ahead-log"},
		{"write ahead log", "write-ahead-log"},
		{"Write–Ahead Log", "write-ahead-log"}, // en dash
		{"HTTP/2", "http-2"},
		{"C++", "cpp"},
		{"C#", "csharp"},
		{"B+ tree", "bplus-tree"},
		{"A* search", "astar-search"},
		{"os.path.join()", "os.path.join"},
		{"json.dumps", "json.dumps"},
		{"$PYTHONPATH", "pythonpath"},
		{"${JAVA_HOME}", "java_home"},
		{"max_connections", "max_connections"},
		{"Dijkstra's algorithm", "dijkstras-algorithm"},
		{".NET", ".net"},
		{"Node.js.", "node.js"},
		{"@property", "@property"},
		{"AT&T", "at-and-t"},
		{"Größe Über", "größe-über"},
		{"", ""},
		{"---", ""},
		{"\xff\xfe", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := Key(tt.in); got != tt.want {
				t.Errorf("Key(%q): got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSingular(t *testing.T) {
	tests := []struct{ in, want string }{
		{"databases", "database"},
		{"libraries", "library"},
		{"indexes", "index"},
		{"hash-tables", "hash-table"},
		{"gpus", "gpu"},
		{"status", ""},
		{"corpus", ""},
		{"analysis", ""},
		{"class", ""},
		{"series", ""},
		{"go", ""},
		{"api2s", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := singular(tt.in); got != tt.want {
				t.Errorf("singular(%q): got %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestResolveAliases checks that the forms of one thing resolve to one id.
func TestResolveAliases(t *testing.T) {
	x := newTestExtractor(t)
	groups := [][]string{
		{"PostgreSQL", "Postgres", "postgresql", "POSTGRES", "pgsql"},
		{"write-ahead log", "Write-Ahead Log", "WAL", "write ahead logging"},
		{"Kubernetes", "k8s", "K8s"},
		{"C++", "cpp"},
		{"HTTP/2", "http2", "HTTP 2"},
		{"JavaScript", "JS", "ECMAScript"},
		{"scikit-learn", "sklearn", "scikit learn"},
		{"Apache Kafka", "Kafka", "kafka"},
		{"hash table", "hash tables", "hashmap", "Hash Map"},
		{"Transport Layer Security", "TLS"},
	}
	for _, g := range groups {
		t.Run(g[0], func(t *testing.T) {
			want := x.Resolve(g[0])
			for _, name := range g[1:] {
				if got := x.Resolve(name); got != want {
					t.Errorf("Resolve(%q): got %q, want %q (as %q)", name, got, want, g[0])
				}
			}
		})
	}
	if a, b := x.Resolve("Redis"), x.Resolve("Rust"); a == b {
		t.Errorf("Redis and Rust resolve to one id %q", a)
	}
}

func TestLookup(t *testing.T) {
	x := newTestExtractor(t)
	e, ok := x.Lookup("Postgres")
	if !ok {
		t.Fatal("Lookup(Postgres): not found")
	}
	if e.ID != "postgresql" || e.Name != "PostgreSQL" || e.Type != "database" || e.Source != SourceGazetteer {
		t.Errorf("Lookup(Postgres): got %+v, want id postgresql, name PostgreSQL, type database, source gazetteer", e)
	}
	if _, ok := x.Lookup("no such thing at all"); ok {
		t.Error("Lookup of an unknown name: got found, want not found")
	}
}

func TestTaxonomyAndGazetteerSize(t *testing.T) {
	x := newTestExtractor(t)
	if n := len(x.Types()); n < 60 {
		t.Errorf("taxonomy types: got %d, want >= 60", n)
	}
	for _, want := range []string{"programming_language", "framework", "library", "database", "protocol", "file_format",
		"operating_system", "command", "config_setting", "api", "data_type", "algorithm", "standard", "tool",
		"cloud_service", "data_structure", "module", "function", "class", "keyword", "exception",
		"environment_variable", "organization", "person", "product", "place", "event", "concept"} {
		if !x.HasType(want) {
			t.Errorf("taxonomy: type %q missing", want)
		}
	}
	if n := len(x.entries); n < 1000 {
		t.Errorf("gazetteer entities: got %d, want >= 1000", n)
	}
	for id, e := range x.entries {
		if !x.HasType(e.typ) {
			t.Errorf("gazetteer entity %s: unknown type %q", id, e.typ)
		}
	}
}

func TestAddKnown(t *testing.T) {
	x := newTestExtractor(t)
	if err := x.AddKnown("Quokka Engine", "database", "QkE"); err != nil {
		t.Fatalf("AddKnown: %v", err)
	}
	got := x.Query("is qke faster than the quokka engine")
	ids := map[string]bool{}
	for _, e := range got {
		ids[e.ID] = true
		if e.ID == "quokka-engine" && e.Type != "database" {
			t.Errorf("type: got %q, want database", e.Type)
		}
	}
	if !ids["quokka-engine"] || len(ids) != 1 {
		t.Errorf("query entities: got %v, want only quokka-engine", got)
	}
	// a known key keeps its gazetteer entity and type
	if err := x.AddKnown("postgres", "tool", "pgx-db"); err != nil {
		t.Fatalf("AddKnown on a gazetteer name: %v", err)
	}
	if e, _ := x.Lookup("pgx-db"); e.ID != "postgresql" || e.Type != "database" {
		t.Errorf("alias of a gazetteer entity: got %+v, want postgresql (database)", e)
	}
	for _, tt := range []struct{ name, typ string }{{"", "database"}, {"  ", "tool"}, {"Thing", "no_such_type"}} {
		if err := x.AddKnown(tt.name, tt.typ); err == nil {
			t.Errorf("AddKnown(%q, %q): got nil error, want one", tt.name, tt.typ)
		}
	}
}

// TestAddKnownConcurrent exercises AddKnown during extraction (run with -race).
func TestAddKnownConcurrent(t *testing.T) {
	x := newTestExtractor(t)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(2)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				_ = x.AddKnown("Thing"+string(rune('A'+g))+string(rune('a'+i%26)), "tool")
			}
		}(g)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				x.Query("ThingAa with PostgreSQL")
				x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: "ThingBb uses Redis."}}})
			}
		}()
	}
	wg.Wait()
	if e, ok := x.Lookup("ThingAa"); !ok || e.Type != "tool" {
		t.Errorf("Lookup(ThingAa): got %+v, %v; want a tool", e, ok)
	}
}

func TestNewOptions(t *testing.T) {
	bad := []Option{WithMinConfidence(1.5), WithMinConfidence(-0.1), WithQueryMinConfidence(2), WithCooccurrence(0, 0.1),
		WithCooccurrence(2, 3), WithMaxChunkBytes(0), WithLearner(nil), WithKnown("x", "no_type")}
	for i, o := range bad {
		if _, err := New(o); err == nil {
			t.Errorf("bad option %d: got nil error, want one", i)
		}
	}
	if _, err := New(WithMinConfidence(0.7), WithCooccurrence(3, 0.2), WithMaxChunkBytes(100), WithKnown("Zorblax", "tool")); err != nil {
		t.Errorf("valid options: %v", err)
	}
}
