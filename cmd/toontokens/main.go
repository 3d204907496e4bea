// Command toontokens measures how many LLM tokens TOON saves: for each
// payload it prints the token counts of pretty JSON, compact JSON and TOON
// in the cl100k_base and o200k_base encodings, and the savings of TOON.
// The built-in payloads are the pkg/toon benchmark values; JSON files given
// as arguments (for example saved search responses) are measured too.
// Tokenizer tables are embedded, so it runs without network access.
//
//	go run ./cmd/toontokens [-builtin=false] [file.json ...]
//	curl -s 'localhost:8080/api/v1/search?q=go&format=json' | go run ./cmd/toontokens -builtin=false -
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/kgsearch/kgsearch/pkg/toon"
	"github.com/kgsearch/kgsearch/pkg/toon/sample"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "toontokens:", err)
		os.Exit(1)
	}
}

// payload is one document in its three renderings.
type payload struct {
	name                        string
	pretty, compact, tn, folded []byte
}

var encodings = []string{"cl100k_base", "o200k_base"}

func run(args []string, out io.Writer) error {
	return runWith(args, os.Stdin, out)
}

func runWith(args []string, stdin io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("toontokens", flag.ContinueOnError)
	builtin := fs.Bool("builtin", true, "measure the built-in benchmark payloads")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var payloads []payload
	if *builtin {
		for _, b := range []struct {
			name string
			v    any
		}{
			{"search response, 50 results", sample.Search(50)},
			{"table, 1000 rows", sample.Table(1000)},
			{"nested config", sample.Config()},
		} {
			p, err := fromValue(b.name, b.v)
			if err != nil {
				return err
			}
			payloads = append(payloads, p)
		}
	}
	for _, f := range fs.Args() {
		if f == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return fmt.Errorf("read payload from stdin: %w", err)
			}
			p, err := fromJSON("stdin", data)
			if err != nil {
				return err
			}
			payloads = append(payloads, p)
			continue
		}
		p, err := fromFile(f)
		if err != nil {
			return err
		}
		payloads = append(payloads, p)
	}
	if len(payloads) == 0 {
		return errors.New("nothing to measure: pass JSON files or keep -builtin")
	}
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	encs := make([]*tiktoken.Tiktoken, len(encodings))
	for i, name := range encodings {
		e, err := tiktoken.GetEncoding(name)
		if err != nil {
			return fmt.Errorf("load tokenizer %s: %w", name, err)
		}
		encs[i] = e
	}
	fmt.Fprintln(out, "| payload | encoding | pretty JSON | compact JSON | TOON | TOON vs pretty | TOON vs compact | TOON, key folding | folded vs compact |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, p := range payloads {
		for i, e := range encs {
			pr := len(e.EncodeOrdinary(string(p.pretty)))
			co := len(e.EncodeOrdinary(string(p.compact)))
			tn := len(e.EncodeOrdinary(string(p.tn)))
			fo := len(e.EncodeOrdinary(string(p.folded)))
			fmt.Fprintf(out, "| %s | %s | %d | %d | %d | %s | %s | %d | %s |\n", p.name, encodings[i], pr, co, tn, saving(pr, tn), saving(co, tn), fo, saving(co, fo))
		}
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| payload | pretty JSON bytes | compact JSON bytes | TOON bytes |")
	fmt.Fprintln(out, "|---|---:|---:|---:|")
	for _, p := range payloads {
		fmt.Fprintf(out, "| %s | %d | %d | %d |\n", p.name, len(p.pretty), len(p.compact), len(p.tn))
	}
	return nil
}

// saving is the relative reduction from base to n, e.g. "-38.2%".
func saving(base, n int) string {
	if base == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", 100*float64(n-base)/float64(base))
}

func fromValue(name string, v any) (payload, error) {
	compact, err := json.Marshal(v)
	if err != nil {
		return payload{}, fmt.Errorf("encode %s as JSON: %w", name, err)
	}
	return fromJSON(name, compact)
}

func fromFile(path string) (payload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return payload{}, fmt.Errorf("read payload: %w", err)
	}
	return fromJSON(filepath.Base(path), data)
}

// fromJSON renders JSON text three ways, keeping the key order of the
// input in every rendering.
func fromJSON(name string, data []byte) (payload, error) {
	var compact, pretty bytes.Buffer
	if err := json.Compact(&compact, data); err != nil {
		return payload{}, fmt.Errorf("payload %s is not valid JSON: %w", name, err)
	}
	if err := json.Indent(&pretty, data, "", "  "); err != nil {
		return payload{}, fmt.Errorf("indent %s: %w", name, err)
	}
	tn, err := toon.FromJSON(data)
	if err != nil {
		return payload{}, fmt.Errorf("convert %s to TOON: %w", name, err)
	}
	folded, err := toon.FromJSON(data, toon.WithKeyFolding(toon.ModeSafe))
	if err != nil {
		return payload{}, fmt.Errorf("convert %s to folded TOON: %w", name, err)
	}
	return payload{name: name, pretty: pretty.Bytes(), compact: compact.Bytes(), tn: tn, folded: folded}, nil
}
