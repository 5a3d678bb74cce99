package serve

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// benchServer is a server holding n live calls' operator records (no call
// trees: what the list and the event stream read).
func benchServer(b *testing.B, n int) *Server {
	b.Helper()
	s, err := New(Config{MaxCalls: n, Node: "n1", IdleFree: -1}, &simAgent{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.sys.Shutdown)
	for i := range n {
		id := messages.CallID(fmt.Sprintf("wr-%016x", i))
		info := newCallInfo(nil)
		info.transport, info.state, info.turns, info.lastTurn = "webrtc", messages.StateListening, 3, 412*time.Millisecond
		s.live[id] = info
	}
	return s
}

// BenchmarkOperatorList: GET /operator/calls's work at 1 000 live calls
// (the summaries and their JSON), the goal being ≤ 100 ms for
// 1 000 calls across three nodes.
func BenchmarkOperatorList(b *testing.B) {
	s := benchServer(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		if err := json.NewEncoder(io.Discard).Encode(map[string]any{"node": s.cfg.Node, "calls": s.AllCalls()}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOperatorEventsFlush: one flush of one subscriber's event
// stream at 1 000 live calls, a tenth of them changed since the last
// flush (about what 1 000 calls in conversation do in 250 ms: a state
// change or a turn each every few seconds). The stream flushes four times
// a second: the cost per second of a subscriber is four of these.
func BenchmarkOperatorEventsFlush(b *testing.B) {
	s := benchServer(b, 1000)
	st := &eventStream{w: io.Discard, sent: map[messages.CallID]uint64{}, remote: map[messages.CallID]CallSummary{}, nodes: map[string]NodeInfo{}}
	s.eventsSnapshot(st)
	ids := make([]messages.CallID, 0, len(s.live))
	for id := range s.live {
		ids = append(ids, id)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.mu.Lock()
		for range 100 {
			s.live[ids[i%len(ids)]].version++
			i++
		}
		s.mu.Unlock()
		s.eventsDelta(st)
		if st.err != nil {
			b.Fatal(st.err)
		}
	}
}
