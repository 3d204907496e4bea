package engine

import (
	"sync"
	"time"
)

// Event types sent on a job's event stream.
const (
	EventPage     = "page"     // a page was stored, found unchanged or empty, deleted, skipped or failed
	EventProgress = "progress" // counters changed
	EventSummary  = "summary"  // the job ended; the stream closes after it
	EventStalled  = "stalled"  // the job cannot make progress; Reason and Error say why
	EventResumed  = "resumed"  // the job makes progress again after a stall
)

// Stall reasons, in "stalled" events and in Status.StalledReason.
const (
	StallDatabase  = "database_unavailable" // MariaDB does not answer; the job waits for it
	StallNoCrawler = "no_crawler"           // the job's owner stopped renewing its lease and no crawler took it over
)

// Event is one message of a job's event stream.
type Event struct {
	Type    string    `json:"type"`
	JobID   string    `json:"job_id"`
	At      time.Time `json:"at"`
	URL     string    `json:"url,omitempty"`
	Depth   int       `json:"depth,omitempty"`
	Outcome string    `json:"outcome,omitempty"` // stored, unchanged, deleted, empty, noindex, script_rendered, skipped, failed
	// Reason is why a page was skipped, failed or deleted (deleted: http_404,
	// http_410, noindex, empty, script_rendered, redirect, redirect_out_of_scope).
	Reason string `json:"reason,omitempty"`
	Chunks int    `json:"chunks,omitempty"`
	Error  string `json:"error,omitempty"`
	// Detail is, for script_rendered, what shows the page is an empty shell;
	// for deleted, why the stored version was removed, in words; for
	// unchanged, that the job's tags replaced those the page was stored with.
	Detail string  `json:"detail,omitempty"`
	Status *Status `json:"status,omitempty"`
}

// hub fans a job's events out to its subscribers. Slow subscribers lose
// events rather than slow the crawl down.
type hub struct {
	mu   sync.Mutex
	subs map[string]map[chan Event]struct{}
}

func newHub() *hub { return &hub{subs: map[string]map[chan Event]struct{}{}} }

// subscribe returns a channel of the job's events and a function that ends
// the subscription.
func (h *hub) subscribe(jobID string) (<-chan Event, func()) {
	ch := make(chan Event, 256)
	h.mu.Lock()
	if h.subs[jobID] == nil {
		h.subs[jobID] = map[chan Event]struct{}{}
	}
	h.subs[jobID][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[jobID], ch)
		if len(h.subs[jobID]) == 0 {
			delete(h.subs, jobID)
		}
		h.mu.Unlock()
	}
}

func (h *hub) publish(ev Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[ev.JobID] {
		select {
		case ch <- ev:
		default:
		}
	}
}
