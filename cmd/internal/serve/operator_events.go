package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// The operator's event stream: how often it sends what changed, and how
// often it proves it is alive when nothing did.
const (
	eventsFlush     = 250 * time.Millisecond
	eventsKeepalive = 15 * time.Second
)

// endedEvent is a call's end on the operator's event stream.
type endedEvent struct {
	ID     messages.CallID `json:"id"`
	Node   string          `json:"node"`
	Reason string          `json:"reason"`
}

// operatorEvents streams the node's calls and its own state as
// server-sent events: a snapshot first, then every flush the calls that
// changed (one event per call however often it changed), the calls that
// ended and the node when it changed. A stream costs one scan of the live
// calls per flush, whatever the calls do; it ends with the request or
// when the server's shutdown is over.
func (s *Server) operatorEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "this connection cannot stream"})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &eventStream{w: w, sent: map[messages.CallID]uint64{}, remote: map[messages.CallID]CallSummary{}, nodes: map[string]NodeInfo{}}
	calls, nodes := s.eventsSnapshot(st)
	st.event("snapshot", map[string]any{"node": s.cfg.Node, "calls": calls, "nodes": nodes})
	fl.Flush()
	if st.err != nil {
		return
	}
	tick := time.NewTicker(eventsFlush)
	defer tick.Stop()
	idle := 0
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.quit:
			return
		case <-tick.C:
		}
		if s.eventsDelta(st) {
			idle = 0
		} else if idle++; time.Duration(idle)*eventsFlush >= eventsKeepalive {
			idle = 0
			st.comment("keepalive")
		} else {
			continue
		}
		fl.Flush()
		if st.err != nil {
			return
		}
	}
}

// eventStream is one subscriber's stream and what it was sent: the local
// calls' versions, the other nodes' calls and the nodes as last sent.
type eventStream struct {
	w      io.Writer
	err    error
	sent   map[messages.CallID]uint64
	remote map[messages.CallID]CallSummary
	nodes  map[string]NodeInfo
}

func (e *eventStream) event(name string, v any) {
	if e.err != nil {
		return
	}
	data, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	_, e.err = fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, data)
}

func (e *eventStream) comment(text string) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, ": %s\n\n", text)
	}
}

// eventsSnapshot is the stream's first event: every live call of every
// node and the nodes, remembered as sent.
func (s *Server) eventsSnapshot(st *eventStream) ([]CallSummary, []NodeInfo) {
	now := time.Now()
	s.mu.Lock()
	calls := make([]CallSummary, 0, len(s.live))
	for id, info := range s.live {
		calls = append(calls, s.summaryLocked(id, info, now))
		st.sent[id] = info.version
	}
	nodes := []NodeInfo{s.nodeLocked()}
	f := s.fleet
	s.mu.Unlock()
	if f != nil {
		for _, n := range f.Others() {
			n.Node.Self = false
			nodes = append(nodes, n.Node)
			for _, c := range n.Calls {
				calls = append(calls, c)
				st.remote[c.ID] = c
			}
		}
	}
	for _, n := range nodes {
		st.nodes[n.Node] = n
	}
	sortSummaries(calls)
	return calls, nodes
}

// eventsDelta writes what changed since the stream's last flush; false
// when nothing did.
func (s *Server) eventsDelta(st *eventStream) bool {
	now := time.Now()
	var changed []CallSummary
	var ended []endedEvent
	s.mu.Lock()
	for id, info := range s.live {
		if st.sent[id] != info.version {
			changed = append(changed, s.summaryLocked(id, info, now))
			st.sent[id] = info.version
		}
	}
	for id := range st.sent {
		if _, live := s.live[id]; !live {
			ended = append(ended, endedEvent{ID: id, Node: s.cfg.Node, Reason: s.recent.reason(id)})
			delete(st.sent, id)
		}
	}
	nodes := []NodeInfo{s.nodeLocked()}
	f := s.fleet
	s.mu.Unlock()
	if f != nil {
		seen := make(map[messages.CallID]bool, len(st.remote))
		for _, n := range f.Others() {
			n.Node.Self = false
			nodes = append(nodes, n.Node)
			for _, c := range n.Calls {
				seen[c.ID] = true
				if prev, ok := st.remote[c.ID]; !ok || !sameSummary(prev, c) {
					changed = append(changed, c)
					st.remote[c.ID] = c
				}
			}
		}
		for id, c := range st.remote {
			if !seen[id] {
				ended = append(ended, endedEvent{ID: id, Node: c.Node})
				delete(st.remote, id)
			}
		}
	}
	sortSummaries(changed)
	for _, c := range changed {
		st.event("call", c)
	}
	for _, e := range ended {
		st.event("ended", e)
	}
	sent := len(changed) > 0 || len(ended) > 0
	names := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		names[n.Node] = true
		if prev, ok := st.nodes[n.Node]; !ok || !sameNode(prev, n) {
			st.event("node", n)
			st.nodes[n.Node] = n
			sent = true
		}
	}
	for name := range st.nodes {
		if !names[name] {
			st.event("node_left", map[string]string{"node": name})
			delete(st.nodes, name)
			sent = true
		}
	}
	return sent
}

// sameSummary says whether a call's summary changed, its age aside.
func sameSummary(a, b CallSummary) bool {
	la, lb := a.LastTurnMS, b.LastTurnMS
	a.AgeMS, b.AgeMS, a.LastTurnMS, b.LastTurnMS = 0, 0, nil, nil
	if (la == nil) != (lb == nil) || (la != nil && *la != *lb) {
		return false
	}
	return a == b
}

// sameNode says whether a node changed in what the stream shows (its
// calls, its limit, its drain), its uptime and load aside.
func sameNode(a, b NodeInfo) bool {
	return a.LiveCalls == b.LiveCalls && a.MaxCalls == b.MaxCalls && a.Draining == b.Draining &&
		(a.Drain == nil) == (b.Drain == nil) && (a.Drain == nil || *a.Drain == *b.Drain)
}
