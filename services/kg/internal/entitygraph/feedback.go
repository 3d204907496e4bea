package entitygraph

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/kgsearch/kgsearch/pkg/fielderr"
	"github.com/kgsearch/kgsearch/pkg/graph/profile"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// Profiles is the in-memory copy of the documents' entity profiles
// (*profile.Store): it answers feedback and follows ingests and deletes.
type Profiles interface {
	Loaded() bool
	Feedback(seeds []profile.Seed, candidates []string, topEntities int) profile.Result
	Refresh(ctx context.Context, src profile.Source, docID string) error
	Delete(docID string)
}

// Feedback request limits.
const (
	maxFeedbackSeeds      = 50
	maxFeedbackCandidates = 2000
	maxFeedbackEntities   = 100
)

// Feedback scores the candidate documents by how close their entity profiles are
// to the seed documents' (graph feedback, see pkg/graph/profile), and names the
// entities the seeds share. It reads memory only; before the profiles are loaded it
// returns ErrStarting.
func (s *Service) Feedback(_ context.Context, req kgapi.FeedbackRequest) (kgapi.FeedbackResponse, error) {
	seeds, err := feedbackSeeds(req)
	if err != nil {
		return kgapi.FeedbackResponse{}, err
	}
	if s.d.Profiles == nil || !s.d.Profiles.Loaded() {
		return kgapi.FeedbackResponse{}, ErrStarting
	}
	res := s.d.Profiles.Feedback(seeds, req.Candidates, req.Entities)
	out := kgapi.FeedbackResponse{Scores: make([]kgapi.DocumentScore, 0, len(res.Scores)), Entities: []kgapi.WeightedEntity{}}
	for id, v := range res.Scores {
		out.Scores = append(out.Scores, kgapi.DocumentScore{DocumentID: id, Score: v})
	}
	slices.SortFunc(out.Scores, func(a, b kgapi.DocumentScore) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.DocumentID, b.DocumentID)
	})
	for _, e := range res.Entities {
		out.Entities = append(out.Entities, kgapi.WeightedEntity{
			EntityRef: kgapi.EntityRef{ID: e.ID, Name: e.Name, Type: e.Type}, Weight: e.Weight, Documents: e.Documents})
	}
	return out, nil
}

// feedbackSeeds validates a feedback request, naming the first field at fault.
func feedbackSeeds(req kgapi.FeedbackRequest) ([]profile.Seed, error) {
	if len(req.Seeds) == 0 {
		return nil, fielderr.New("seeds", "seeds is empty: give the documents a first ranking put on top, with their scores as weights")
	}
	if len(req.Seeds) > maxFeedbackSeeds {
		return nil, fielderr.Newf("seeds", "%d seeds, the maximum is %d", len(req.Seeds), maxFeedbackSeeds)
	}
	if len(req.Candidates) > maxFeedbackCandidates {
		return nil, fielderr.Newf("candidates", "%d candidates, the maximum is %d", len(req.Candidates), maxFeedbackCandidates)
	}
	if req.Entities < 0 || req.Entities > maxFeedbackEntities {
		return nil, fielderr.Newf("entities", "entities is %d, want 0..%d", req.Entities, maxFeedbackEntities)
	}
	seeds := make([]profile.Seed, 0, len(req.Seeds))
	for i, sd := range req.Seeds {
		if err := checkID(fmt.Sprintf("seeds[%d].document_id", i), sd.DocumentID); err != nil {
			return nil, err
		}
		if math.IsNaN(sd.Weight) || math.IsInf(sd.Weight, 0) || sd.Weight <= 0 {
			return nil, fielderr.New(fmt.Sprintf("seeds[%d].weight", i), "weight must be a positive finite number")
		}
		seeds = append(seeds, profile.Seed{DocumentID: sd.DocumentID, Weight: sd.Weight})
	}
	for i, id := range req.Candidates {
		if err := checkID(fmt.Sprintf("candidates[%d]", i), id); err != nil {
			return nil, err
		}
	}
	return seeds, nil
}

// profileChanged brings the document's entity profile up to date after an ingest
// (deleted false) or a delete. A failure is logged: the periodic reload repairs it.
func (s *Service) profileChanged(ctx context.Context, docID string, deleted bool) {
	if s.d.Profiles == nil {
		return
	}
	if deleted {
		s.d.Profiles.Delete(docID)
		return
	}
	if err := s.d.Profiles.Refresh(ctx, s.d.ProfileSource, docID); err != nil {
		s.d.Logger.Warn("entity profile refresh failed; the periodic reload will repair it", "document", docID, "err", err)
	}
}
