package kgapi

import (
	"context"
	"fmt"
	"net/http"
)

// FeedbackSeed is a page a first ranking put on top, with its first-pass score. The
// weight orders the seeds (kg uses one per 50 documents it holds) and weights the
// five heaviest in the related entities; every seed used counts once in the
// candidates' scores, except that near-copies among the seeds (entity-profile cosine
// at least 0.5) share one seed's weight.
type FeedbackSeed struct {
	DocumentID string  `json:"document_id"`
	Weight     float64 `json:"weight"`
}

// FeedbackRequest is the body of POST /api/v1/feedback: graph feedback from the
// seeds to the candidate documents.
type FeedbackRequest struct {
	Seeds      []FeedbackSeed `json:"seeds"`
	Candidates []string       `json:"candidates"`
	// Entities is how many of the seeds' heaviest entities to return (0: none).
	Entities int `json:"entities,omitempty"`
}

// DocumentScore is a candidate's closeness to the seeds in the entity graph.
type DocumentScore struct {
	DocumentID string  `json:"document_id"`
	Score      float64 `json:"score"` // cosine of entity profiles, in (0,1]
}

// WeightedEntity is an entity the seed pages are about.
type WeightedEntity struct {
	EntityRef
	Weight float64 `json:"weight"` // share of the seeds' entity centroid, in (0,1]
	// Documents is how many documents mention the entity (its document frequency);
	// 0 when the kg does not say.
	Documents int `json:"documents,omitempty"`
}

// FeedbackResponse lists the candidates that share entities with the seeds, best
// first, and the entities the seeds are about, heaviest first.
type FeedbackResponse struct {
	Scores   []DocumentScore  `json:"scores"`
	Entities []WeightedEntity `json:"entities"`
}

// Feedback scores candidate documents by how close their entity profiles are to the
// seed documents'.
func (c *Client) Feedback(ctx context.Context, req FeedbackRequest) (*FeedbackResponse, error) {
	var out FeedbackResponse
	if err := c.do(ctx, http.MethodPost, "/api/v1/feedback", req, &out); err != nil {
		return nil, fmt.Errorf("graph feedback: %w", err)
	}
	return &out, nil
}
