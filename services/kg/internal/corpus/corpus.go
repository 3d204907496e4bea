// Package corpus keeps what the kg service learns from its corpus across
// restarts: the extract.Learner's statistics in a file, and the graph's frequent
// entities in the extractor's live gazetteer.
package corpus

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
)

// LoadLearner reads the learner saved at path. A missing file gives an empty
// learner; a file it cannot use is renamed to path.bad-<unix time> and an empty
// learner is returned with the reason logged, so a damaged file never stops the
// service (the graph still holds every entity).
func LoadLearner(path string, cfg extract.LearnerConfig, logger *slog.Logger) (*extract.Learner, error) {
	if path == "" {
		return extract.NewLearner(cfg), nil
	}
	f, err := os.Open(path) //nolint:gosec // G304: the learner file comes from the operator's configuration
	if errors.Is(err, fs.ErrNotExist) {
		logger.Info("no learner state yet, starting empty", "file", path)
		return extract.NewLearner(cfg), nil
	}
	if err != nil {
		return nil, fmt.Errorf("open learner state %s: %w", path, err)
	}
	defer f.Close()
	l, err := extract.LoadLearner(f)
	if err != nil {
		aside := fmt.Sprintf("%s.bad-%d", path, time.Now().Unix())
		if rerr := os.Rename(path, aside); rerr != nil {
			return nil, fmt.Errorf("learner state %s is unusable (%v) and cannot be moved aside: %w", path, err, rerr) //nolint:errorlint // the caller acts on the rename failure; the load error is kept as text
		}
		logger.Error("learner state unusable, moved aside; starting empty", "file", path, "moved_to", aside, "err", err)
		return extract.NewLearner(cfg), nil
	}
	logger.Info("learner state loaded", "file", path, "documents", l.Documents(), "promoted", len(l.Promoted()))
	return l, nil
}

// SaveLearner writes the learner's state to path atomically: to a temporary file
// in the same folder, synced, then renamed over path.
func SaveLearner(path string, l *extract.Learner) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("save learner state: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".learner-*.json")
	if err != nil {
		return fmt.Errorf("save learner state: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := l.Save(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("save learner state to %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("save learner state: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("save learner state: close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("save learner state: %w", err)
	}
	return nil
}

// Saver saves a learner every interval when changes() moved since the last save,
// and once more when ctx ends.
type Saver struct {
	Path     string
	Learner  *extract.Learner
	Interval time.Duration
	Changes  func() int64
	Logger   *slog.Logger
}

// Run saves until ctx is cancelled; the final save's error is returned.
func (s Saver) Run(ctx context.Context) error {
	if s.Path == "" {
		<-ctx.Done()
		return nil
	}
	last := s.Changes()
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if s.Changes() == last {
				return nil
			}
			if err := SaveLearner(s.Path, s.Learner); err != nil {
				return err
			}
			s.Logger.Info("learner state saved", "file", s.Path, "documents", s.Learner.Documents())
			return nil
		case <-t.C:
			n := s.Changes()
			if n == last {
				continue
			}
			if err := SaveLearner(s.Path, s.Learner); err != nil {
				s.Logger.Warn("learner state not saved, will retry", "file", s.Path, "err", err)
				continue
			}
			last = n
			s.Logger.Debug("learner state saved", "file", s.Path, "documents", s.Learner.Documents())
		}
	}
}

// Lister is the part of the graph store a refresh reads (*graph.Store).
type Lister interface {
	EntitiesByPrefix(ctx context.Context, prefix, typ string, limit int) ([]graph.EntityStats, error)
}

// Known is the part of the extractor a refresh writes (*extract.Extractor).
type Known interface {
	AddKnown(name, typ string, aliases ...string) error
	Lookup(name string) (extract.Entity, bool)
}

// codeTypes are the entity types pattern rules find in code (identifiers, calls,
// flags, paths, versions). Their names are often everyday words ("module",
// "default", "items") that would match all over prose if they joined the
// gazetteer, and the pattern rules find them in code spans anyway.
var codeTypes = map[string]bool{
	"module": true, "function": true, "method": true, "class": true, "exception": true, "keyword": true,
	"operator": true, "decorator": true, "attribute": true, "constant": true, "identifier": true,
	"command": true, "cli_option": true, "config_setting": true, "environment_variable": true,
	"api_endpoint": true, "http_header": true, "status_code": true, "file": true, "url": true,
	"version": true, "data_type": true,
}

// Gazetteer reports whether a graph entity may join the live gazetteer: seen in
// at least minDocs documents, not a code-level type, and a name that cannot be
// an everyday word: several words, or a capital letter or digit in it ("Kafka",
// "gRPC", "S3"), and at least three characters of key.
func Gazetteer(e graph.EntityStats, minDocs int) bool {
	if e.DocFreq < int64(minDocs) || codeTypes[e.Type] || len(extract.Key(e.Name)) < 3 {
		return false
	}
	if strings.ContainsAny(strings.TrimSpace(e.Name), " \t") {
		return true
	}
	return strings.IndexFunc(e.Name, func(r rune) bool { return unicode.IsUpper(r) || unicode.IsDigit(r) }) >= 0
}

// RefreshGazetteer loads the size most frequent graph entities that Gazetteer
// accepts into the extractor's live gazetteer, and returns how many it added.
// Entities the extractor already knows, whose name does not normalise to their
// id, or whose type the taxonomy does not know are skipped.
func RefreshGazetteer(ctx context.Context, g Lister, x Known, size, minDocs int) (int, error) {
	if size <= 0 {
		return 0, nil
	}
	list, err := g.EntitiesByPrefix(ctx, "", "", size)
	if err != nil {
		return 0, fmt.Errorf("refresh gazetteer: %w", err)
	}
	n := 0
	for _, e := range list {
		if !Gazetteer(e, minDocs) {
			continue
		}
		if k, ok := x.Lookup(e.Name); ok && k.ID == e.ID {
			continue // the gazetteer, a learned term or an earlier refresh has it
		}
		if extract.Key(e.Name) != e.ID {
			continue // the name would make another entity: not a key the graph can confirm
		}
		if err := x.AddKnown(e.Name, e.Type); err != nil {
			continue
		}
		n++
	}
	return n, nil
}
