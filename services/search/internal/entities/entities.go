// Package entities finds the entities of a search query for pkg/queryparse: the
// pkg/extract query extractor (the same taxonomy, gazetteer and normalisation the kg
// service uses, so the keys it returns are the kg's entity ids) run in-process, plus a
// live gazetteer of the entities the graph has learned, refreshed from the kg service
// in the background.
//
// Why not call kg's /api/v1/parse per query: it would put a network round trip and a
// dependency on the critical path of phase 1, and parsing must keep working when kg is
// down (graceful degradation). The learned entities change slowly, so a periodic
// refresh (Refresh) gives the same answers at a few microseconds per query.
package entities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
)

// Lister lists the kg service's entities by name prefix.
type Lister interface {
	Entities(ctx context.Context, prefix, typ string, limit int) (*kgapi.EntityList, error)
}

// Finder implements queryparse.Finder over an extractor.
type Finder struct {
	x       *extract.Extractor
	learned atomic.Int64
}

// NewFinder returns a finder with the embedded taxonomy and gazetteer.
func NewFinder() (*Finder, error) {
	x, err := extract.New()
	if err != nil {
		return nil, fmt.Errorf("load entity extractor: %w", err)
	}
	return &Finder{x: x}, nil
}

// Query implements queryparse.Finder.
func (f *Finder) Query(q string) []queryparse.Entity {
	found := f.x.Query(q)
	out := make([]queryparse.Entity, len(found))
	for i, e := range found {
		out[i] = queryparse.Entity{Text: e.Text, ID: e.ID, Name: e.Name, Type: e.Type,
			Confidence: e.Confidence, Start: e.Start, End: e.End}
	}
	return out
}

// Learned returns how many kg entities the live gazetteer took so far.
func (f *Finder) Learned() int64 { return f.learned.Load() }

// Refresh adds the kg service's entities (up to limit, at most kgapi.MaxEntityList, the
// most kg lists in one request; most mentioned first) to the live gazetteer. Entities
// of a type the taxonomy does not know are skipped, and so are everyday words and
// keys of one or two characters (extract.IsEverydayWord): the learner types words
// such as "a" (file), "parse" (function) or "file" (cli option), and a query
// gazetteer holding them finds an entity in most plain-language questions, which
// then lose the graph and title signals' sense of what the query names.
func (f *Finder) Refresh(ctx context.Context, kg Lister, limit int) (int, error) {
	list, err := kg.Entities(ctx, "", "", min(limit, kgapi.MaxEntityList))
	if err != nil {
		return 0, fmt.Errorf("refresh gazetteer: %w", err)
	}
	n := 0
	for _, e := range list.Entities {
		if e.Name == "" || !f.x.HasType(e.Type) || extract.IsEverydayWord(e.Name) {
			continue
		}
		if _, ok := f.x.Lookup(e.Name); ok && len(e.Aliases) == 0 {
			continue
		}
		if err := f.x.AddKnown(e.Name, e.Type, e.Aliases...); err == nil {
			n++
		}
	}
	f.learned.Add(int64(n))
	return n, nil
}

// RunRefresh refreshes every interval until ctx ends; failures are logged and retried.
func (f *Finder) RunRefresh(ctx context.Context, kg Lister, interval time.Duration, limit int, logger *slog.Logger) {
	if interval <= 0 {
		return
	}
	retry := 10 * time.Second
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		n, err := f.Refresh(rctx, kg, limit)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			wait = min(retry, interval)
			var se *kgapi.StatusError
			if errors.As(err, &se) && se.Status < 500 {
				// kg refused the request: retrying soon will not help, and without the
				// learned entities queries find only the embedded gazetteer's.
				logger.Warn("gazetteer refresh refused by kg; learned entities are not loaded", "status", se.Status, "err", err)
				wait = interval
			} else {
				logger.Debug("gazetteer refresh failed", "err", err)
			}
			continue
		}
		if n > 0 {
			logger.Info("gazetteer refreshed from kg", "added", n)
		}
		wait = interval
	}
}
