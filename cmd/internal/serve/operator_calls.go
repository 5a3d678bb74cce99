package serve

import (
	"sort"
	"time"

	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/messages"
)

// callInfo is what the server knows of a live call for its operators,
// kept from the call's own events. Guarded by the server's mutex.
type callInfo struct {
	conn      Conn
	transport string
	started   time.Time
	state     string
	turns     int
	lastTurn  time.Duration
	restarts  int
	// version goes up with every change, so the event stream sends a
	// call only when it changed.
	version uint64
}

// transporter is a Conn that names its transport (webrtc, pcm, sip, ...).
type transporter interface{ Transport() string }

func newCallInfo(c Conn) *callInfo {
	t := "unknown"
	if tn, ok := c.(transporter); ok {
		t = tn.Transport()
	}
	return &callInfo{conn: c, transport: t, started: time.Now(), state: "starting", version: 1}
}

// follow keeps a call's operator view from its events: its state, its
// answered turns and their last latency, its stage restarts. Called on
// the session's goroutine; the other kinds (words, tools) cost nothing
// here.
func (s *Server) follow(id messages.CallID, e *messages.CallEvent) {
	switch e.Kind {
	case messages.EventState, messages.EventLatency, messages.EventRestart:
	default:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.live[id]
	if info == nil {
		return
	}
	switch e.Kind {
	case messages.EventState:
		info.state = e.State
	case messages.EventLatency:
		info.turns++
		info.lastTurn = e.Latency
	case messages.EventRestart:
		info.restarts++
	}
	info.version++
}

// CallSummary is a live call as the operator API lists it.
type CallSummary struct {
	ID        messages.CallID `json:"id"`
	Node      string          `json:"node"`
	Transport string          `json:"transport"`
	Agent     string          `json:"agent"`
	// State: starting (admitted, no state yet), listening, thinking,
	// speaking, ended.
	State   string    `json:"state"`
	Started time.Time `json:"started"`
	AgeMS   int64     `json:"age_ms"`
	// Turns counts the answered turns; LastTurnMS is the last one's
	// latency, end of speech to first audio out (nil before the first).
	Turns      int      `json:"turns"`
	LastTurnMS *float64 `json:"last_turn_ms,omitempty"`
	Restarts   int      `json:"restarts"`
}

// summaryLocked is the summary of a live call at now.
func (s *Server) summaryLocked(id messages.CallID, info *callInfo, now time.Time) CallSummary {
	out := CallSummary{
		ID: id, Node: s.cfg.Node, Transport: info.transport, Agent: s.agent.Name(),
		State: info.state, Started: info.started.UTC(), AgeMS: now.Sub(info.started).Milliseconds(),
		Turns: info.turns, Restarts: info.restarts,
	}
	if info.turns > 0 {
		v := ms(info.lastTurn.Microseconds())
		out.LastTurnMS = &v
	}
	return out
}

// Calls lists the live calls for operators, sorted by id.
func (s *Server) Calls() []CallSummary {
	now := time.Now()
	s.mu.Lock()
	out := make([]CallSummary, 0, len(s.live))
	for id, info := range s.live {
		out = append(out, s.summaryLocked(id, info, now))
	}
	s.mu.Unlock()
	sortSummaries(out)
	return out
}

func sortSummaries(cs []CallSummary) {
	sort.Slice(cs, func(i, j int) bool { return cs[i].ID < cs[j].ID })
}

// callSummary is one live call's summary; ok is false for an unknown one.
func (s *Server) callSummary(id messages.CallID) (CallSummary, bool) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	info := s.live[id]
	if info == nil {
		return CallSummary{}, false
	}
	return s.summaryLocked(id, info, now), true
}

// TurnTimeline is one turn's marks as the operator API shows them:
// milliseconds from the turn's vad_stop (from its earliest mark when it
// has none), At being that zero's wall time.
type TurnTimeline struct {
	Epoch   uint64             `json:"epoch"`
	At      time.Time          `json:"at"`
	MarksMS map[string]float64 `json:"marks_ms"`
}

// timelinesOf turns a session's timelines into the operator's.
func timelinesOf(ts []session.Timeline) []TurnTimeline {
	out := make([]TurnTimeline, 0, len(ts))
	for _, t := range ts {
		if len(t.Marks) == 0 {
			continue
		}
		zero, ok := t.Marks[messages.MarkVADStop]
		if !ok {
			for _, at := range t.Marks {
				if zero.IsZero() || at.Before(zero) {
					zero = at
				}
			}
		}
		marks := make(map[string]float64, len(t.Marks))
		for k, at := range t.Marks {
			marks[k.String()] = ms(at.Sub(zero).Microseconds())
		}
		out = append(out, TurnTimeline{Epoch: uint64(t.Epoch), At: zero.UTC(), MarksMS: marks})
	}
	return out
}

// endedRing remembers why the last calls ended, for the operator's event
// stream (a call that ended between two of its flushes).
type endedRing struct {
	reasons map[messages.CallID]string
	order   []messages.CallID
}

// endedKept bounds the ring.
const endedKept = 1024

func (r *endedRing) add(id messages.CallID, reason string) {
	if r.reasons == nil {
		r.reasons = make(map[messages.CallID]string, endedKept)
	}
	if len(r.order) == endedKept {
		delete(r.reasons, r.order[0])
		r.order = r.order[1:]
	}
	r.reasons[id] = reason
	r.order = append(r.order, id)
}

func (r *endedRing) reason(id messages.CallID) string { return r.reasons[id] }
