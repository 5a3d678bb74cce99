package serve

import (
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// Keeper follows every call for what is kept of it: its record, its
// recording, its trace (docs/RECORDS.md). The server calls Begin when a
// call's session is about to start, then the follower's Event with each
// live event on the session's goroutine and End once with the call's end
// (also for a call whose session did not start: Reason ReasonNotStarted).
type Keeper interface {
	Begin(c CallStart) Follower
}

// Follower is one call's keeper. Event runs on the session's goroutine:
// it must be cheap and never block. Tap, when not nil, is given the
// call's audio (a recording). TraceID names the call's trace in the logs
// ("" without tracing).
type Follower interface {
	Event(e *messages.CallEvent)
	End(e messages.CallEnded)
	Tap() conn.Tap
	TraceID() string
}

// ReasonNotStarted is the end reason a Follower gets for a call whose
// session could not be started (the agent refused it, the switchboard
// did not answer, a drain began).
const ReasonNotStarted = "not_started"

// CallStart is what the server knows of a call as it starts.
type CallStart struct {
	ID messages.CallID
	// Transport as the operator API names it (webrtc, pcm, sip, ...);
	// Direction inbound or outbound.
	Transport, Direction string
	// Trunk names the SIP trunk of the call ("" when none).
	Trunk string
	// Caller and Callee are the parties' numbers (SIP user parts) as the
	// transport has them, "" when it has none: personal data, for the
	// keeper's policy to hash or drop, never for logs.
	Caller, Callee string
	Agent          string
	// AgentDigest is the sha256 (hex) of the agent's file, when the
	// agent knows it (a Digester).
	AgentDigest string
	// Started is when the call was admitted; Answered when its session
	// started (the call was connected).
	Started, Answered time.Time
	// InputRate and OutputRate are the call's audio rates (a recording's).
	InputRate, OutputRate int
}

// Digester is an Agent that knows the digest of the file it was built
// from, for the call records.
type Digester interface{ Digest() string }

// parties is a Conn that knows the call's parties (a SIP call).
type parties interface {
	Parties() (caller, callee string)
}

// trunked is a Conn that names its SIP trunk.
type trunked interface{ TrunkName() string }

// callStart gathers what the keeper is told of a starting call.
func (s *Server) callStart(id messages.CallID, c Conn, dial *DialRequest) CallStart {
	st := CallStart{ID: id, Transport: "unknown", Direction: "inbound", Agent: s.agent.Name(), Answered: time.Now(),
		InputRate: c.InputRate(), OutputRate: c.OutputRate()}
	if tn, ok := c.(transporter); ok {
		st.Transport = tn.Transport()
	}
	if dial != nil {
		st.Direction = "outbound"
	}
	if p, ok := c.(parties); ok {
		st.Caller, st.Callee = p.Parties()
	}
	if tr, ok := c.(trunked); ok {
		st.Trunk = tr.TrunkName()
	}
	if d, ok := s.agent.(Digester); ok {
		st.AgentDigest = d.Digest()
	}
	s.mu.Lock()
	if info := s.live[id]; info != nil {
		st.Started = info.started
	}
	s.mu.Unlock()
	if st.Started.IsZero() {
		st.Started = st.Answered
	}
	return st
}
