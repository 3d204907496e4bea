package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// Dataset is a relevance dataset: queries with graded judgments on a site, and the
// crawl that puts the site into the stores (eval/<name>/queries.json).
type Dataset struct {
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Site        Site              `json:"site"`
	Crawl       Crawl             `json:"crawl"`
	Grades      map[string]string `json:"grades"`
	Queries     []Query           `json:"queries"`
}

// Site says where the judged pages come from.
type Site struct {
	Package  string `json:"package"`
	Version  string `json:"version"`
	ServedBy string `json:"served_by"`
	Root     string `json:"root"` // the URL the judged paths are relative to
	// Script serves the site on loopback: scripts/eval.sh runs `<script> start`
	// before crawling (a path relative to the repository, e.g. deploy/local/pydocs.sh).
	Script string `json:"script"`
}

// Crawl is the crawl spec the evaluation runs on (POST /api/v1/crawls fields, with
// Start relative to Site.Root).
type Crawl struct {
	Start         string   `json:"start"`
	MaxDepth      int      `json:"max_depth"`
	MaxPages      int      `json:"max_pages"`
	Exclude       []string `json:"exclude"`
	Tags          []string `json:"tags"`
	ExpectedPages int      `json:"expected_pages"`
}

// Query is one query with its judged pages.
type Query struct {
	ID       string    `json:"id"`
	Query    string    `json:"query"`
	Style    string    `json:"style"` // question, keywords, identifier, synonym
	Area     string    `json:"area"`  // part of the manual the main answer is in
	Relevant Judgments `json:"relevant"`
}

// MaxGrade is the highest grade a judgment may carry.
const MaxGrade = 2

var sitePath = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*$`)

var pagePath = regexp.MustCompile(`^[A-Za-z0-9_.~+-]+(/[A-Za-z0-9_.~+-]+)*$`)

// LoadDataset reads and validates a dataset file.
func LoadDataset(path string) (*Dataset, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read dataset: %w", err)
	}
	var d Dataset
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("parse dataset %s: %w", path, err)
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	return &d, nil
}

// Validate reports every problem of the dataset at once.
func (d *Dataset) Validate() error {
	var errs []error
	if len(d.Queries) == 0 {
		errs = append(errs, errors.New("no queries"))
	}
	if d.Crawl.MaxDepth < 0 || d.Crawl.MaxPages < 0 {
		errs = append(errs, errors.New("crawl: max_depth and max_pages must not be negative"))
	}
	if d.Site.Script != "" && (!sitePath.MatchString(d.Site.Script) || strings.Contains(d.Site.Script, "..")) {
		errs = append(errs, fmt.Errorf("site.script %q: want a script path relative to the repository, such as deploy/local/pydocs.sh", d.Site.Script))
	}
	for _, ex := range d.Crawl.Exclude {
		if _, err := regexp.Compile(ex); err != nil {
			errs = append(errs, fmt.Errorf("crawl.exclude %q: %w", ex, err))
		}
	}
	ids := map[string]bool{}
	texts := map[string]string{}
	for i, q := range d.Queries {
		where := fmt.Sprintf("queries[%d]", i)
		if q.ID != "" {
			where += " (" + q.ID + ")"
		}
		switch {
		case q.ID == "":
			errs = append(errs, fmt.Errorf("%s: id is empty", where))
		case ids[q.ID]:
			errs = append(errs, fmt.Errorf("%s: id is used twice", where))
		}
		ids[q.ID] = true
		text := strings.ToLower(strings.TrimSpace(q.Query))
		if text == "" {
			errs = append(errs, fmt.Errorf("%s: query is empty", where))
		} else if other, ok := texts[text]; ok {
			errs = append(errs, fmt.Errorf("%s: same query text as %s", where, other))
		}
		texts[text] = q.ID
		top := 0
		for page, g := range q.Relevant {
			if !pagePath.MatchString(page) || strings.Contains(page, "..") {
				errs = append(errs, fmt.Errorf("%s: relevant page %q must be a path relative to the site root, without scheme, host, query or fragment", where, page))
			}
			if g < 1 || g > MaxGrade {
				errs = append(errs, fmt.Errorf("%s: grade of %s is %d, want 1..%d (leave unjudged pages out)", where, page, g, MaxGrade))
			}
			top = max(top, g)
		}
		if len(q.Relevant) == 0 {
			errs = append(errs, fmt.Errorf("%s: no relevant page judged", where))
		} else if top < MaxGrade {
			errs = append(errs, fmt.Errorf("%s: no page has grade %d (the page that answers the query)", where, MaxGrade))
		}
	}
	return errors.Join(errs...)
}
