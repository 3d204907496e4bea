package toon_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/kgsearch/kgsearch/pkg/toon"
)

func ExampleMarshal() {
	type Result struct {
		ID    int     `json:"id"`
		Title string  `json:"title"`
		Score float64 `json:"score"`
	}
	resp := struct {
		Query   string   `json:"query"`
		Results []Result `toon:"results"`
		Tags    []string `json:"tags,omitempty"`
	}{
		Query:   "graph search",
		Results: []Result{{1, "Knowledge graphs", 0.92}, {2, "BM25, explained", 0.81}},
		Tags:    []string{"ir", "graphs"},
	}
	out, err := toon.Marshal(resp)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// query: graph search
	// results[2]{id,title,score}:
	//   1,Knowledge graphs,0.92
	//   2,"BM25, explained",0.81
	// tags[2]: ir,graphs
}

func ExampleUnmarshal() {
	doc := []byte(`users[2]{id,name,admin}:
  1,Ada,true
  2,Bob,false`)
	var v struct {
		Users []struct {
			ID    int    `json:"id"`
			Name  string `json:"name"`
			Admin bool   `json:"admin"`
		} `json:"users"`
	}
	if err := toon.Unmarshal(doc, &v); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", v.Users)

	// Errors name the line and the rule that was broken.
	err := toon.Unmarshal([]byte("users[2]{id,name}:\n  1,Ada\n  2"), &v)
	var se *toon.SyntaxError
	fmt.Println(errors.As(err, &se), err)
	// Output:
	// [{ID:1 Name:Ada Admin:true} {ID:2 Name:Bob Admin:false}]
	// true toon: line 3: tabular row has 1 values, header declares 2
}

func ExampleFromJSON() {
	out, err := toon.FromJSON([]byte(`{"zeta":1,"alpha":[1e6,0.10,12345678901234567890],"items":[{"sku":"A1","qty":2},{"sku":"B2","qty":1}]}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// zeta: 1
	// alpha[3]: 1000000,0.1,12345678901234567890
	// items[2]{sku,qty}:
	//   A1,2
	//   B2,1
}

func ExampleToJSON() {
	out, err := toon.ToJSON([]byte("b: 2\na:\n  list[3]: x,\"1\",1.50"))
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// Output:
	// {"b":2,"a":{"list":["x","1",1.5]}}
}

func ExampleWithKeyFolding() {
	v := map[string]any{"server": map[string]any{"http": map[string]any{"port": 8080}}}
	out, _ := toon.Marshal(v, toon.WithKeyFolding(toon.ModeSafe))
	fmt.Println(string(out))

	back, _ := toon.ToJSON(out, toon.WithExpandPaths(toon.ModeSafe))
	fmt.Println(string(back))
	// Output:
	// server.http.port: 8080
	// {"server":{"http":{"port":8080}}}
}

func ExampleWithDelimiter() {
	rows := []map[string]any{{"name": "a, b", "n": 1}, {"name": "c|d", "n": 2}}
	out, _ := toon.Marshal(map[string]any{"rows": rows}, toon.WithDelimiter('|'), toon.WithIndent(4))
	fmt.Println(string(out))
	// Output:
	// rows[2|]{n|name}:
	//     1|a, b
	//     2|"c|d"
}

func ExampleWithStrict() {
	doc := []byte("tags[3]: a,b")
	_, err := toon.ToJSON(doc)
	fmt.Println(err)
	out, _ := toon.ToJSON(doc, toon.WithStrict(false))
	fmt.Println(string(out))
	// Output:
	// toon: line 1: inline array has 2 values, header declares 3
	// {"tags":["a","b"]}
}

func ExampleNewEncoder() {
	enc := toon.NewEncoder(os.Stdout)
	_ = enc.Encode(map[string]any{"ok": true, "count": 3})
	// Output:
	// count: 3
	// ok: true
}

func ExampleWriteHTTP() {
	handler := func(w http.ResponseWriter, r *http.Request) {
		body := map[string]any{"results": []map[string]any{{"id": 1, "url": "https://go.dev"}}}
		if err := toon.WriteHTTP(w, r, http.StatusOK, body, toon.FormatTOON); err != nil {
			http.Error(w, "encode failed", http.StatusInternalServerError)
		}
	}
	for _, accept := range []string{"text/toon", "application/json"} {
		r := httptest.NewRequest(http.MethodGet, "/api/v1/search?q=go", nil)
		r.Header.Set("Accept", accept)
		w := httptest.NewRecorder()
		handler(w, r)
		fmt.Println(w.Header().Get("Content-Type"))
		fmt.Println(w.Body.String())
	}
	// Output:
	// text/toon; charset=utf-8
	// results[1]{id,url}:
	//   1,"https://go.dev"
	// application/json; charset=utf-8
	// {"results":[{"id":1,"url":"https://go.dev"}]}
}
