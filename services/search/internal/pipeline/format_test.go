package pipeline

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// page is a ranked result of its own document.
func page(doc, title string, headings []string, text string) ranker.Result {
	return ranker.Result{Candidate: ranker.Candidate{DocumentID: doc, URL: "https://docs.test/" + doc, Title: title,
		Headings: headings, Text: text}}
}

func query(normalized string, entities ...string) queryparse.Query {
	q := queryparse.Query{Normalized: normalized, Terms: queryparse.Terms(normalized)}
	for _, e := range entities {
		q.Entities = append(q.Entities, queryparse.Entity{Text: e, Name: e, ID: e})
	}
	return q
}

// relatedEntities is relatedWithin without the confidence cut: what the selection's
// rules alone show (the rules' tests read it).
func relatedEntities(q queryparse.Query, fb []kgapi.WeightedEntity, ranked []ranker.Result, pages []topPage, scope int) []RelatedEntity {
	r, _ := relatedWithin(noConfidenceCut, q, fb, ranked, pages, scope)
	return r
}

func names(list []RelatedEntity) []string {
	out := []string{}
	for _, e := range list {
		out = append(out, e.Name)
	}
	return out
}

// csvPages are the top results of "read a csv file": the csv page first, an
// unrelated page that mentions its own things last.
var csvPages = []ranker.Result{
	page("csv", "csv — CSV File Reading and Writing", []string{"csv — CSV File Reading and Writing", "Module Contents"},
		"The csv module implements classes to read and write tabular data in CSV format.\n\n"+
			"class csv.DictReader(f, fieldnames=None, restkey=None)\n\n"+
			"Create an object that operates like a regular reader but maps the information in each row to a dict.\n\n"+
			">>> import csv\n>>> with open('names.csv', newline='') as csvfile:\n...     reader = csv.DictReader(csvfile)\n"+
			"    spamreader = csv.reader(csvfile, delimiter=' ')\n"),
	page("io", "io — Core tools for working with streams", []string{"io — Core tools for working with streams", "Text I/O"},
		"Text I/O expects and produces str objects, and the open function is the easiest way to read a file here.\n"),
	page("tut", "7. Input and Output", []string{"7. Input and Output", "7.2. Reading and Writing Files"},
		"open() returns a file object, and is most commonly used with two positional arguments for reading a csv or other file.\n"),
}

func TestRelatedEntitiesAreWhatTheTopPagesAreAbout(t *testing.T) {
	q := query("read a csv file")
	fb := []kgapi.WeightedEntity{
		{EntityRef: kgapi.EntityRef{ID: "open", Name: "open", Type: "function"}, Weight: 0.30, Documents: 115},             // generic: most pages
		{EntityRef: kgapi.EntityRef{ID: "spamreader", Name: "spamreader", Type: "identifier"}, Weight: 0.25, Documents: 2}, // only in example code
		{EntityRef: kgapi.EntityRef{ID: "dictreader", Name: "DictReader", Type: "class"}, Weight: 0.20, Documents: 2},      // defined on the top page
		{EntityRef: kgapi.EntityRef{ID: "csv", Name: "csv", Type: "module"}, Weight: 0.20, Documents: 12},                  // the query's word
		{EntityRef: kgapi.EntityRef{ID: "3.11", Name: "Python 3.11", Type: "version"}, Weight: 0.19, Documents: 3},
		{EntityRef: kgapi.EntityRef{ID: "text i/o", Name: "Text I/O", Type: "concept"}, Weight: 0.15, Documents: 4}, // a section title
		{EntityRef: kgapi.EntityRef{ID: "names.csv", Name: "names.csv", Type: "file"}, Weight: 0.15, Documents: 1},  // an example's file
		{EntityRef: kgapi.EntityRef{ID: "tabular", Name: "tabular", Type: "concept"}, Weight: 0.14, Documents: 2},   // one page's word
		{EntityRef: kgapi.EntityRef{ID: "io", Name: "io", Type: "module"}, Weight: 0.13, Documents: 21},             // a top title names it
	}
	// io's page is a top page, but the passage that answers the query (the first
	// result's chunk) says nothing of io.
	pages := topPages(csvPages, nil, nil)
	got := names(relatedEntities(q, fb, csvPages, pages, 650))
	if diff := cmp.Diff([]string{"DictReader"}, got); diff != "" {
		t.Errorf("related entities (-want +got):\n%s", diff)
	}
	// When io's chunk is the one most similar to the query, it answers too.
	similar := slices.Clone(csvPages)
	for i, s := range []float64{0.41, 0.62, 0.30} {
		similar[i].Candidate.VectorSimilarity, similar[i].Candidate.HasVector = s, true
	}
	pages = topPages(similar, nil, nil)
	noDictReader := slices.DeleteFunc(slices.Clone(fb), func(e kgapi.WeightedEntity) bool { return e.Name == "DictReader" })
	if diff := cmp.Diff([]string{"io"}, names(relatedEntities(q, noDictReader, similar, pages, 650))); diff != "" {
		t.Errorf("io's chunk closest to the query: related entities (-want +got):\n%s", diff)
	}
	// Second to DictReader, io (no query word, not the first page's subject) is an
	// alternative to the answer, not shown (shownRelated).
	if diff := cmp.Diff([]string{"DictReader"}, names(relatedEntities(q, fb, similar, pages, 650))); diff != "" {
		t.Errorf("io second: related entities (-want +got):\n%s", diff)
	}
	// A corpus of 100 documents makes io (21 of them) generic even with its title.
	if got := names(relatedEntities(q, noDictReader, similar, pages, 100)); len(got) != 0 {
		t.Errorf("in a 100-document scope: got %v, want none", got)
	}
}

// On a small site the share alone would make a few pages' topic generic: five of
// 63 documents is 8 %, twice genericShare, yet DictReader is what the top page
// defines. At most minGenericDocuments (12) documents is never generic; more is,
// by share as before.
func TestRelatedEntitiesOnASmallSite(t *testing.T) {
	q := query("read a csv file")
	fb := func(docs int) []kgapi.WeightedEntity {
		return []kgapi.WeightedEntity{{EntityRef: kgapi.EntityRef{ID: "dictreader", Name: "DictReader", Type: "class"}, Weight: 0.2, Documents: docs}}
	}
	pages := topPages(csvPages, nil, nil)
	if diff := cmp.Diff([]string{"DictReader"}, names(relatedEntities(q, fb(5), csvPages, pages, 63))); diff != "" {
		t.Errorf("5 of 63 documents: related entities (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"DictReader"}, names(relatedEntities(q, fb(12), csvPages, pages, 63))); diff != "" {
		t.Errorf("12 of 63 documents: related entities (-want +got):\n%s", diff)
	}
	if got := names(relatedEntities(q, fb(13), csvPages, pages, 63)); len(got) != 0 {
		t.Errorf("13 of 63 documents: got %v, want none (generic)", got)
	}
	// In a large scope the share decides alone, as before: 13 of 400 is under 4 %,
	// 17 of 400 over it.
	if diff := cmp.Diff([]string{"DictReader"}, names(relatedEntities(q, fb(13), csvPages, pages, 400))); diff != "" {
		t.Errorf("13 of 400 documents: related entities (-want +got):\n%s", diff)
	}
	if got := names(relatedEntities(q, fb(17), csvPages, pages, 400)); len(got) != 0 {
		t.Errorf("17 of 400 documents: got %v, want none (generic)", got)
	}
}

// migrationPages are the top results of "undo a migration" with their chunks'
// embeddings (three dimensions; the query's is qvecUndo): the first result's chunk
// is about RunPython and far from the query, the page's other chunk, about
// reversing migrations, is the closest, the second page's chunk next.
var qvecUndo = []float32{1, 0, 0}

func migrationPages() ([]ranker.Result, func(string) []ranker.Candidate) {
	first := page("migrations", "Migrations — Django documentation", []string{"Migrations", "RunPython"},
		"The RunPython operation runs custom Python code in a migration and its reverse_code function runs when it is unapplied.\n")
	first.Candidate.ChunkID, first.Candidate.Embedding = "1", []float32{0.2, 1, 0}
	second := page("admin", "django-admin and manage.py — Django documentation", []string{"django-admin", "migrate"},
		"Synchronizes the database state with the current set of models and migrations, and the migrate command unapplies them too.\n")
	second.Candidate.ChunkID, second.Candidate.Embedding = "2", []float32{0.9, 0.4, 0}
	other := ranker.Candidate{ChunkID: "3", DocumentID: "migrations", Headings: []string{"Migrations", "Reversing migrations"},
		Text: "Migrations can be reversed with the MigrationExecutor, which the MigrationLoader reads, by passing the previous migration as the target.\n", Embedding: []float32{1, 0.1, 0},
		VectorSimilarity: 0.99, HasVector: true}
	more := func(doc string) []ranker.Candidate {
		if doc == "migrations" {
			return []ranker.Candidate{first.Candidate, other}
		}
		return nil
	}
	return []ranker.Result{first, second}, more
}

func TestRelatedEntitiesNearTheQuery(t *testing.T) {
	q := query("undo a migration")
	fb := []kgapi.WeightedEntity{
		{EntityRef: kgapi.EntityRef{ID: "runpython", Name: "RunPython", Type: "class"}, Weight: 0.3, Documents: 3},
		{EntityRef: kgapi.EntityRef{ID: "migrationexecutor", Name: "MigrationExecutor", Type: "class"}, Weight: 0.2, Documents: 5},
	}
	results, more := migrationPages()
	// RunPython is named by the first result's chunk (an answering passage), but by
	// neither of the two chunks closest to the query.
	if diff := cmp.Diff([]string{"MigrationExecutor"}, names(relatedEntities(q, fb, results, topPages(results, more, qvecUndo), 650))); diff != "" {
		t.Errorf("related entities (-want +got):\n%s", diff)
	}
	// Without a query embedding there is no closeness to test.
	if diff := cmp.Diff([]string{"RunPython", "MigrationExecutor"}, names(relatedEntities(q, fb, results, topPages(results, more, nil), 650))); diff != "" {
		t.Errorf("no query embedding: related entities (-want +got):\n%s", diff)
	}
	// A dropped entity is not replaced by the next candidate: MigrationExecutor
	// stays the only one beside a third candidate.
	fb = append(fb, kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: "migrationloader", Name: "MigrationLoader", Type: "class"}, Weight: 0.15, Documents: 2})
	if diff := cmp.Diff([]string{"MigrationExecutor"}, names(relatedEntities(q, fb, results, topPages(results, more, qvecUndo), 650))); diff != "" {
		t.Errorf("a third candidate: related entities (-want +got):\n%s", diff)
	}
}

func TestNearThreshold(t *testing.T) {
	results, more := migrationPages()
	pages := topPages(results, more, qvecUndo)
	th, ok := nearThreshold(pages)
	if !ok || th < 0.9 || th > 0.92 { // the second closest: the admin page's chunk, cos ≈ 0.914
		t.Errorf("nearThreshold = %v, %v; want the second closest passage's closeness (about 0.914)", th, ok)
	}
	if _, ok := nearThreshold(topPages(results, more, nil)); ok {
		t.Error("no query embedding: want no threshold")
	}
	if _, ok := nearThreshold(topPages(results, more, []float32{1, 0})); ok {
		t.Error("an embedding of another length: want no threshold")
	}
}

func TestRelatedSecondNeedsAQueryWordOrTheFirstTitle(t *testing.T) {
	q := query("generate a secure token")
	results := []ranker.Result{
		page("secrets", "secrets — Generate secure random numbers for managing secrets", []string{"secrets — Generate", "Generating tokens"},
			"The secrets module is used for generating tokens, and token_hex returns a random text string, unlike the random module.\n"),
		page("random", "random — Generate pseudo-random numbers", []string{"random — Generate pseudo-random numbers"},
			"The random module should not be used for security purposes; for security or cryptographic uses see the secrets module.\n"),
	}
	rnd := kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: "random", Name: "random", Type: "module"}, Weight: 0.2, Documents: 8}
	hex := kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: "token_hex", Name: "token_hex", Type: "function"}, Weight: 0.2, Documents: 2}
	sec := kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: "secrets", Name: "secrets", Type: "module"}, Weight: 0.3, Documents: 5}
	pages := topPages(results, nil, nil)
	// random: a second page's subject, sharing no word with the query.
	if diff := cmp.Diff([]string{"secrets"}, names(relatedEntities(q, []kgapi.WeightedEntity{sec, rnd}, results, pages, 650))); diff != "" {
		t.Errorf("related entities (-want +got):\n%s", diff)
	}
	// token_hex shares "token" with the query.
	if diff := cmp.Diff([]string{"secrets", "token_hex"}, names(relatedEntities(q, []kgapi.WeightedEntity{sec, hex}, results, pages, 650))); diff != "" {
		t.Errorf("a second with a query word (-want +got):\n%s", diff)
	}
	// First, random needs neither.
	if diff := cmp.Diff([]string{"random"}, names(relatedEntities(q, []kgapi.WeightedEntity{rnd}, results, pages, 650))); diff != "" {
		t.Errorf("random alone (-want +got):\n%s", diff)
	}
}

func TestRelatedEntitiesNotParameterNames(t *testing.T) {
	q := query("create directories with makedirs when it exists already")
	text := "os.makedirs(name, mode=0o777, exist_ok=False)\n\n" +
		"Recursive directory creation function that makes all the directories needed to contain the leaf.\n" +
		"If exist_ok is False, an error is raised when the target directory exists already.\n"
	fb := []kgapi.WeightedEntity{
		{EntityRef: kgapi.EntityRef{ID: "os.makedirs", Name: "os.makedirs", Type: "function"}, Weight: 0.3, Documents: 3},
		{EntityRef: kgapi.EntityRef{ID: "exist_ok", Name: "exist_ok", Type: "identifier"}, Weight: 0.2, Documents: 3},
	}
	results := []ranker.Result{page("os", "os — Miscellaneous operating system interfaces", []string{"os — Miscellaneous", "Files and Directories"}, text)}
	if diff := cmp.Diff([]string{"os.makedirs"}, names(relatedEntities(q, fb, results, topPages(results, nil, nil), 650))); diff != "" {
		t.Errorf("a parameter of the signature is no related entity (-want +got):\n%s", diff)
	}
	// A heading naming it makes it a topic of its own.
	results[0].Candidate.Headings = append(results[0].Candidate.Headings, "The exist_ok flag")
	if diff := cmp.Diff([]string{"os.makedirs", "exist_ok"}, names(relatedEntities(q, fb, results, topPages(results, nil, nil), 650))); diff != "" {
		t.Errorf("a parameter a heading names (-want +got):\n%s", diff)
	}
}

func TestRelatedEntitiesNotAnEverydayMemberName(t *testing.T) {
	q := query("checkconstraint on a model")
	results := []ranker.Result{page("constraints", "Constraints reference — Django documentation",
		[]string{"Constraints reference", "CheckConstraint", "check"},
		"class CheckConstraint(*, check, name)\n\nCreates a check constraint in the database.\n\n"+
			"CheckConstraint.check\n\nA Q object or boolean expression that specifies the check you want the constraint to enforce.\n"+
			"CheckConstraint.name\n\nThe name of the constraint, which you must always specify as a unique name for the constraint.\n")}
	check := kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: "check", Name: "check", Type: "function"}, Weight: 0.3, Documents: 4}
	pages := topPages(results, nil, nil)
	// "check": an everyday word, defined here only as CheckConstraint.check, sharing no
	// query word: shown alone it names nothing.
	if got := names(relatedEntities(q, []kgapi.WeightedEntity{check}, results, pages, 650)); len(got) != 0 {
		t.Errorf("got %v, want none: a member's everyday bare name", got)
	}
	// A query word it shares ties it to the question.
	if diff := cmp.Diff([]string{"check"}, names(relatedEntities(query("what the checks of a constraint do"),
		[]kgapi.WeightedEntity{check}, results, pages, 650))); diff != "" {
		t.Errorf("a member name the query says (-want +got):\n%s", diff)
	}
	// A module whose own function carries its name ("socket.socket") stays.
	sock := []ranker.Result{page("socket", "socket — Low-level networking interface", []string{"socket — Low-level networking interface"},
		"socket.socket(family=AF_INET, type=SOCK_STREAM, proto=0, fileno=None)\n\n"+
			"Create a new socket using the given address family, socket type and protocol number for network connections.\n")}
	mod := kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: "socket", Name: "socket", Type: "module"}, Weight: 0.3, Documents: 4}
	if diff := cmp.Diff([]string{"socket"}, names(relatedEntities(query("low level network connections"),
		[]kgapi.WeightedEntity{mod}, sock, topPages(sock, nil, nil), 650))); diff != "" {
		t.Errorf("a module (-want +got):\n%s", diff)
	}
}

// queuePages are the top results of "priority queue": two pages that mention FIFO
// and maxsize in their sentences, neither in a title or heading.
func queuePages() []ranker.Result {
	return []ranker.Result{
		page("queue", "queue — A synchronized queue class", []string{"queue — A synchronized queue class"},
			"In a FIFO queue the first tasks added are the first retrieved, and maxsize sets the upper bound on the number of items.\n"),
		page("heapq", "heapq — Heap queue algorithm", []string{"heapq — Heap queue algorithm"},
			"Unlike a FIFO list, a heap keeps its smallest item first, and maxsize plays no part in how the items are ordered.\n"),
	}
}

func TestRelatedTopicNeedsATitleHeadingOrQueryWord(t *testing.T) {
	q := query("priority queue")
	results := queuePages()
	topic := kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: "fifo", Name: "FIFO", Type: "concept"}, Weight: 0.3, Documents: 6}
	code := kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: "maxsize", Name: "maxsize", Type: "identifier"}, Weight: 0.3, Documents: 6}
	pages := topPages(results, nil, nil)
	// Both are mentioned in the sentences of two top pages, with no title, heading or
	// query word naming them: a concept is a word the pages use in passing...
	if got := names(relatedEntities(q, []kgapi.WeightedEntity{topic}, results, pages, 650)); len(got) != 0 {
		t.Errorf("got %v, want none: a concept on salience alone", got)
	}
	// ... a code name is what they use.
	if diff := cmp.Diff([]string{"maxsize"}, names(relatedEntities(q, []kgapi.WeightedEntity{code}, results, pages, 650))); diff != "" {
		t.Errorf("a code name on salience (-want +got):\n%s", diff)
	}
	// A heading naming the concept makes it a topic of the results.
	results[0].Candidate.Headings = append(results[0].Candidate.Headings, "FIFO queues")
	if diff := cmp.Diff([]string{"FIFO"}, names(relatedEntities(q, []kgapi.WeightedEntity{topic}, results, topPages(results, nil, nil), 650))); diff != "" {
		t.Errorf("a concept a heading names (-want +got):\n%s", diff)
	}
}

func TestRelatedEntitiesNoneWhenNothingIsGoodEnough(t *testing.T) {
	q := query("read a csv file")
	fb := []kgapi.WeightedEntity{
		{EntityRef: kgapi.EntityRef{ID: "spamreader", Name: "spamreader", Type: "identifier"}, Weight: 0.4, Documents: 2},
		{EntityRef: kgapi.EntityRef{ID: "article.objects.filter", Name: "Article.objects.filter", Type: "method"}, Weight: 0.4, Documents: 2},
		{EntityRef: kgapi.EntityRef{ID: "print", Name: "print", Type: "function"}, Weight: 0.4, Documents: 300},
	}
	got := relatedEntities(q, fb, csvPages, topPages(csvPages, nil, nil), 650)
	if len(got) != 0 {
		t.Errorf("got %v, want none: example names, usage chains and generic names are not what the pages are about", got)
	}
	if got := relatedEntities(q, fb, nil, nil, 650); len(got) != 0 {
		t.Errorf("no results: got %v, want none", got)
	}
}

func TestRelatedEntitiesAtMostTwoBestFirst(t *testing.T) {
	q := query("parse command line arguments")
	results := []ranker.Result{page("argparse", "argparse — Parser for command-line options", []string{"argparse — Parser", "Example"},
		"The argparse module makes it easy to write user-friendly command-line interfaces.\n"+
			"ArgumentParser.add_argument(name or flags...)\n"+
			"ArgumentParser.parse_args(args=None, namespace=None)\n"+
			"The getopt module and the optparse module are older parsers for the same sys.argv list of arguments.\n")}
	var fb []kgapi.WeightedEntity
	for _, n := range []string{"argparse", "ArgumentParser.add_argument", "ArgumentParser.parse_args", "getopt", "optparse", "sys.argv"} {
		fb = append(fb, kgapi.WeightedEntity{EntityRef: kgapi.EntityRef{ID: n, Name: n, Type: "function"}, Weight: 0.2, Documents: 3})
	}
	got := relatedEntities(q, fb, results, topPages(results, nil, nil), 650)
	if diff := cmp.Diff([]string{"argparse", "ArgumentParser.add_argument"}, names(got)); diff != "" {
		t.Errorf("related entities (-want +got):\n%s", diff)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score || got[i].Source != "results" {
			t.Errorf("not best first from the results: %+v", got)
		}
	}
}

func TestRelatedEntitiesWithoutFeedbackUseTheResultsMentions(t *testing.T) {
	results := []ranker.Result{page("redis", "Redis persistence", []string{"Redis persistence", "AOF"},
		"Redis can append every write to the AOF file, and PostgreSQL replicas replay the WAL the same way.\n")}
	results[0].Candidate.EntityMentions = []string{"Redis", "PostgreSQL", "fsync"}
	got := relatedEntities(query("postgresql durability", "postgresql"), nil, results, topPages(results, nil, nil), 0)
	if diff := cmp.Diff([]string{"Redis"}, names(got)); diff != "" {
		t.Errorf("related entities (-want +got):\n%s", diff)
	}
}

func TestSuggestions(t *testing.T) {
	q := query("parse command line arguments")
	pages := topPages([]ranker.Result{page("argparse", "argparse — Parser for command-line options", []string{"argparse — Parser", "getopt"},
		"The argparse module and sys.argv are how a program reads its command line arguments and options.\n")}, nil, nil)
	for _, tc := range []struct {
		name    string
		q       queryparse.Query
		related []RelatedEntity
		want    []string
	}{
		{"named by a top title or heading, or sharing a query word, in their own spelling", q, []RelatedEntity{
			{Name: "argparse"}, {Name: "getopt"}, {Name: "ArgumentParser.parse_args"}, {Name: "sys.argv"},
		}, []string{"argparse", "getopt"}},
		{"not what the query already says", query("argparse subcommands"), []RelatedEntity{{Name: "argparse"}}, []string{}},
		{"not the last part of a dotted name the query says", query("argparse.ArgumentParser"), []RelatedEntity{{Name: "ArgumentParser"}, {Name: "getopt"}},
			[]string{"getopt"}},
		{"an entity mentioned in passing is no suggestion", q, []RelatedEntity{{Name: "sys.argv"}}, []string{}},
		{"not a plain phrase of the query's own words", query("write a custom validator for a model field"),
			[]RelatedEntity{{Name: "Validators", Type: "concept"}, {Name: "Model fields", Type: "identifier"}, {Name: "custom validator"}}, []string{}},
		{"a phrase that adds a word, and a name typed as code, stay", query("how do I undo a migration thread"),
			[]RelatedEntity{{Name: "Squashing migrations", Type: "concept"}, {Name: "threading", Type: "module"}},
			[]string{"Squashing migrations", "threading"}},
		{"nothing to suggest", q, nil, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, suggestions(tc.q, tc.related, pages)); diff != "" {
				t.Errorf("suggestions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefinedName(t *testing.T) {
	for line, want := range map[string]string{
		"class csv.DictReader(f, fieldnames=None, restkey=None)": "csv.DictReader",
		"@functools.lru_cache(maxsize=128, typed=False)":         "functools.lru_cache",
		"exception asyncio.BrokenBarrierError":                   "asyncio.BrokenBarrierError",
		"never_cache(view_func)[source]":                         "never_cache",
		"class EmailMessage[source]":                             "EmailMessage",
		"coroutine abort()":                                      "abort",
		"class Person(models.Model):":                            "",
		"The csv module implements classes.":                     "",
		"x = csv.reader(f)":                                      "",
		"3.11":                                                   "",
		"":                                                       "",
	} {
		if got := definedName(line); got != want {
			t.Errorf("definedName(%q) = %q, want %q", line, got, want)
		}
	}
}

func TestEvidenceHelpers(t *testing.T) {
	params := "(name, mode=0o777, exist_ok=false)\n(*, follow_symlinks=true)\n(src, dst)"
	for name, want := range map[string]bool{"exist_ok": true, "follow_symlinks": true, "dst": true, "name": true, "mode": true,
		"ok": false, "0o777": false, "os.makedirs": false, "true": false} {
		if got := isParameter(params, name); got != want {
			t.Errorf("isParameter(%q) = %v, want %v", name, got, want)
		}
	}
	if !isProseLine("The csv module implements classes to read and write tabular data.") {
		t.Error("a sentence is prose")
	}
	for _, code := range []string{"    reader = csv.reader(f)", ">>> import csv", "from django.db import models", "writer.writerow(['a', 'b'])"} {
		if isProseLine(code) {
			t.Errorf("%q is code, not prose", code)
		}
	}
	if !containsName("use csv.reader here", "csv.reader") || containsName("use mycsv.reader", "csv.reader") ||
		containsName("os.path.join", "path") || !containsName("the path.", "path") {
		t.Error("containsName must match whole names only")
	}
	terms := queryparse.Terms("how do i send an email")
	for name, want := range map[string]bool{"send_mail": true, "EmailMessage": true, "EMAIL_HOST": true, "smtplib": false, "SMTP": false} {
		if got := sharesQueryWord(name, terms); got != want {
			t.Errorf("sharesQueryWord(%q, %v) = %v, want %v", name, terms, got, want)
		}
	}
	for name, want := range map[string]bool{"Article.objects.filter": true, "django.contrib.auth": false, "QuerySet.select_related": false,
		"Built-in Functions": true, "Python 3.11": true, "--verbose": true, "DictReader": false, "abstract base class": false,
		"A.B": true, "x.y.z": true, "os.path": false, "re.A": false} {
		if got := noiseName(name, "concept"); got != want {
			t.Errorf("noiseName(%q) = %v, want %v", name, got, want)
		}
	}
}
