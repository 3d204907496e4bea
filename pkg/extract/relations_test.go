package extract

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func relationSet(res Result) map[string]Relation {
	out := map[string]Relation{}
	for _, r := range res.Relations {
		if r.Type == RelCoOccurs {
			continue
		}
		out[fmt.Sprintf("%s %s %s", r.From, r.Type, r.To)] = r
	}
	return out
}

func TestLexicalRelations(t *testing.T) {
	x := newTestExtractor(t)
	tests := []struct {
		text   string
		want   []string
		absent []string
	}{
		{"Django uses PostgreSQL.", []string{"django USES postgresql"}, nil},
		{"Redis is used by Celery.", []string{"celery USES redis"}, nil},
		{"PostgreSQL is a relational database.", []string{"postgresql IS_A relational-database"}, nil},
		{"Flask depends on Werkzeug.", []string{"flask DEPENDS_ON werkzeug"}, nil},
		{"The asyncio module is part of the Python standard library and Pandas is part of NumFOCUS.", []string{"pandas PART_OF numfocus"}, nil},
		{"Django ships with an object-relational mapper.", []string{"object-relational-mapping PART_OF django"}, nil},
		{"nginx supports HTTP/2 and gRPC.", []string{"nginx SUPPORTS http-2", "nginx SUPPORTS grpc"}, nil},
		{"FastAPI is built on top of Starlette.", []string{"fastapi BUILT_ON starlette"}, nil},
		{"Spring Boot extends the Spring Framework.", []string{"spring-boot EXTENDS spring-framework"}, nil},
		{"CPython implements Python.", []string{"cpython IMPLEMENTS python"}, nil},
		{"TLS replaces SSL.", []string{"tls REPLACES ssl"}, nil},
		{"Terraform is written in Go.", []string{"terraform WRITTEN_IN go"}, nil},
		{"QUIC runs over UDP.", []string{"quic RUNS_ON udp"}, nil},
		{"Redis Sentinel provides high availability.", []string{"redis-sentinel PROVIDES high-availability"}, nil},
		{"PyTorch was developed by Meta.", []string{"pytorch DEVELOPED_BY meta"}, nil},
		{"Podman is an alternative to Docker.", []string{"podman ALTERNATIVE_TO docker"}, nil},
		{"Milvus and Qdrant use HNSW.", []string{"milvus USES hnsw", "qdrant USES hnsw"}, nil},
		{"Django supports PostgreSQL, MySQL and SQLite.", []string{"django SUPPORTS postgresql", "django SUPPORTS mysql", "django SUPPORTS sqlite"}, nil},
		{"Vector databases such as Milvus and Qdrant are popular.", []string{"milvus IS_A vector-database", "qdrant IS_A vector-database"}, nil},
		{"etcd, a distributed key-value store that uses Raft, keeps state.", []string{"etcd IS_A key-value-store", "etcd USES raft"}, nil},
		{"Flask is small. It depends on Werkzeug.", []string{"flask DEPENDS_ON werkzeug"}, nil},
		{"CPython is the reference implementation of Python and is written in C.", []string{"cpython IMPLEMENTS python", "cpython WRITTEN_IN c"}, nil},
		{"Terraform is an infrastructure as code tool written in Go.", []string{"terraform WRITTEN_IN go"}, []string{"infrastructure-as-code WRITTEN_IN go"}},
		{"Python 3.12 is fast.", []string{"python-3.12 VERSION_OF python"}, nil},
		{"Call `json.dumps()` here.", []string{"json.dumps PART_OF json"}, nil},
		// negative cases
		{"Helm charts are written in YAML.", nil, []string{"helm-chart WRITTEN_IN yaml"}},
		{"Flask does not use SQLAlchemy.", nil, []string{"flask USES sqlalchemy"}},
		{"Django never supports Oracle Database.", nil, []string{"django SUPPORTS oracle-database"}},
		{"nginx is often deployed as a reverse proxy.", nil, []string{"nginx IS_A reverse-proxy"}},
		{"PyTorch is an open-source machine learning framework.", nil, []string{"pytorch IS_A machine-learning"}},
		{"Kafka is fast, but Redis uses memory.", []string{"redis USES memory"}[:0], []string{"kafka USES memory"}},
		{"Python and Redis are popular; Docker uses Linux.", []string{"docker USES linux"}, []string{"redis USES linux", "python USES linux"}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := relationSet(x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: tt.text}}}))
			for _, w := range tt.want {
				r, ok := got[w]
				if !ok {
					t.Errorf("relation %q missing; got %v", w, keys(got))
					continue
				}
				if r.Confidence <= 0 || r.Confidence > 1 || len(r.Evidence) == 0 {
					t.Errorf("relation %q: got confidence %v and evidence %v, want (0,1] and some", w, r.Confidence, r.Evidence)
				}
				for _, ev := range r.Evidence {
					if ev.ChunkID != "c" || ev.Start < 0 || ev.End > len(tt.text) || ev.Start >= ev.End {
						t.Errorf("relation %q: evidence %+v out of the chunk", w, ev)
					}
				}
			}
			for _, a := range tt.absent {
				if _, ok := got[a]; ok {
					t.Errorf("relation %q: got it, want none", a)
				}
			}
		})
	}
}

func keys(m map[string]Relation) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestNPMI(t *testing.T) {
	tests := []struct {
		name           string
		ca, cb, cab, n int
		want           float64
	}{
		// always together: p(a,b) = p(a) = p(b) = 0.5 → log 2 / log 2
		{"always together", 2, 2, 2, 4, 1},
		// independent: p(a,b) = 0.2 = 0.4 × 0.5
		{"independent", 4, 5, 2, 10, 0},
		// p(a,b) = 0.25, p(a) = 0.5, p(b) = 0.25 → ln 2 / ln 4 = 0.5
		{"half", 4, 2, 2, 8, 0.5},
		// p(a,b) = 0.1, p(a) = p(b) = 0.5 → ln 0.4 / ln 10 = -0.39794
		{"negative", 5, 5, 1, 10, math.Log(0.4) / math.Log(10)},
		{"in every chunk", 3, 3, 3, 3, 1},
		{"never together", 2, 2, 0, 4, -1},
		{"no observations", 0, 0, 0, 0, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NPMI(tt.ca, tt.cb, tt.cab, tt.n); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("NPMI(%d, %d, %d, %d): got %.6f, want %.6f", tt.ca, tt.cb, tt.cab, tt.n, got, tt.want)
			}
		})
	}
}

func TestCooccurrence(t *testing.T) {
	chunks := [][]string{
		{"a", "b", "c"},
		{"a", "b"},
		{"c", "d", "d"}, // duplicates count once
		{"d"},
		{"a", "b", "d"},
		{"e"},
	}
	got := Cooccurrence(chunks, 2, 0)
	// a,b: together 3 of 6 chunks, each in 3 → p(ab)=0.5, p(a)=p(b)=0.5 → NPMI 1
	// c,d: together 1 → below support; a,d and b,d: together 1 → below support
	want := []Pair{{A: "a", B: "b", Count: 3, NPMI: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Cooccurrence (-want +got):\n%s", diff)
	}
	if got := Cooccurrence(chunks, 1, -1); len(got) != 6 {
		t.Errorf("pairs with support 1: got %d (%v), want 6", len(got), got)
	}
}

func TestDocumentCooccurrence(t *testing.T) {
	x := newTestExtractor(t)
	doc := Document{ID: "d", Chunks: []Chunk{
		{ID: "c1", Text: "Celery talks to RabbitMQ."},
		{ID: "c2", Text: "Configure Celery and RabbitMQ together."},
		{ID: "c3", Text: "Grafana draws dashboards."},
		{ID: "c4", Text: "Grafana again."},
	}}
	var found *Relation
	for _, r := range x.Document(doc).Relations {
		if r.Type == RelCoOccurs && r.From == "celery" && r.To == "rabbitmq" {
			found = &r
		}
	}
	if found == nil {
		t.Fatal("CO_OCCURS celery–rabbitmq missing")
	}
	// 4 chunks, each in 2, together in 2: p(ab)=0.5=p(a)=p(b) → NPMI 1
	if math.Abs(found.Weight-1) > 1e-9 || len(found.Evidence) != 2 {
		t.Errorf("co-occurrence: got weight %v evidence %v, want 1 and two chunks", found.Weight, found.Evidence)
	}
	if want := 1.0 * 2 / 3; math.Abs(found.Confidence-want) > 1e-9 {
		t.Errorf("co-occurrence confidence: got %v, want %v", found.Confidence, want)
	}
}

// TestMaxDocumentPairs: a document with many co-occurring entities keeps its n
// strongest CO_OCCURS pairs (highest NPMI, then support), the same ones every time;
// the typed relations are not bounded by it.
func TestMaxDocumentPairs(t *testing.T) {
	// Every chunk names the same five databases: 10 pairs, each in every chunk
	// (NPMI 1); Redis and Kafka share two chunks of four with them… weaker pairs.
	var chunks []Chunk
	for i := 0; i < 4; i++ {
		text := "PostgreSQL, MySQL, SQLite, MariaDB and MongoDB are compared here."
		if i < 2 {
			text += " Redis and Kafka are mentioned too."
		}
		chunks = append(chunks, Chunk{ID: fmt.Sprintf("c%d", i), Text: text})
	}
	doc := Document{ID: "d", Chunks: chunks}
	cooccurs := func(x *Extractor) []Relation {
		var out []Relation
		for _, r := range x.Document(doc).Relations {
			if r.Type == RelCoOccurs {
				out = append(out, r)
			}
		}
		return out
	}
	all := cooccurs(newTestExtractor(t))
	if len(all) < 6 {
		t.Fatalf("the document gives %d co-occurrences; the test needs at least 6", len(all))
	}
	x, err := New(WithMaxDocumentPairs(5))
	if err != nil {
		t.Fatal(err)
	}
	got := cooccurs(x)
	if len(got) != 5 {
		t.Fatalf("co-occurrences with WithMaxDocumentPairs(5): got %d, want 5 (of %d)", len(got), len(all))
	}
	minKept := math.Inf(1)
	for _, r := range got {
		minKept = math.Min(minKept, r.Weight)
	}
	for _, r := range all {
		if r.Weight > minKept+1e-12 && !slices.ContainsFunc(got, func(k Relation) bool { return k.From == r.From && k.To == r.To }) {
			t.Errorf("dropped %s–%s (NPMI %.3f) but kept one with NPMI %.3f", r.From, r.To, r.Weight, minKept)
		}
	}
	if _, err := New(WithMaxDocumentPairs(-1)); err == nil {
		t.Error("WithMaxDocumentPairs(-1): want an error")
	}
}
