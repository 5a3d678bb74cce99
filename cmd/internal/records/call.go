package records

import (
	"sync"
	"time"

	"github.com/brisvox/brisvox/messages"
)

// CallStart is what is known of a call when it begins.
type CallStart struct {
	CallID, Transport, Direction, Trunk, Agent, AgentDigest string
	// Caller and Callee are raw numbers or SIP user parts ("" when
	// unknown); Begin hashes or drops them per the numbers policy, and
	// nothing else of the service ever sees them.
	Caller, Callee    string
	Started, Answered time.Time
	TraceID           string
}

// Call gathers one call's record from its live events. Event and End are
// called from the session's goroutine and only append under the call's
// own lock (never the service's); building, redacting and writing the
// record happen on the service's writer goroutine.
type Call struct {
	s *Service

	mu sync.Mutex
	// head holds the record's fixed fields (numbers already per policy).
	head      Record
	turns     []turnState
	lines     []lineState
	bargeIns  int
	tools     []toolState
	usage     []Usage
	restarts  map[string]int
	failovers []Failover
	// state and stateEpoch follow EventState: a caller speaking while the
	// bot is speaking is a barge-in on the answer of stateEpoch.
	state      string
	stateEpoch uint64
	recording  func() *Recording
	ended      bool
	end        messages.CallEnded
	endedAt    time.Time
	// liveQueued: the call is in the checkpoint queue; ckpt: a
	// checkpoint is wanted (an answered turn or a settled tool since the
	// last one).
	liveQueued bool
	ckpt       bool

	// Owned by the writer goroutine: the live journal's entries of the
	// call (begin, last checkpoint), acked at its end.
	beginSeq, ckptSeq uint64
	begun             bool
}

type turnState struct {
	epoch   uint64
	marks   map[messages.MarkKind]time.Time // the event's copy, never written
	rounds  []time.Time
	latency time.Duration
	stages  []messages.TurnStage // the event's, never written
	bargeIn bool
	cut     bool
}

type lineState struct {
	epoch   uint64
	speaker string
	text    []byte
	at      time.Time
	cut     bool
	keys    int
}

type toolState struct {
	epoch   uint64
	id      string
	name    string
	settled time.Time
	audit   *messages.ToolAudit // the event's, never written
}

// Begin starts the record of a call. The numbers are hashed or dropped
// here, per the policy, before anything else holds them.
func (s *Service) Begin(c CallStart) *Call {
	call := &Call{s: s, head: Record{
		Version: SchemaVersion, CallID: c.CallID, Node: s.cfg.Node,
		Transport: c.Transport, Direction: c.Direction, Trunk: c.Trunk,
		Agent: c.Agent, AgentDigest: c.AgentDigest,
		Caller:  party(s.cfg.Numbers, s.cfg.NumberKey, c.Caller),
		Callee:  party(s.cfg.Numbers, s.cfg.NumberKey, c.Callee),
		Started: c.Started, Answered: c.Answered, TraceID: c.TraceID,
	}}
	s.st.begun.Add(1)
	call.mu.Lock()
	call.scheduleLocked()
	call.mu.Unlock()
	return call
}

// SetRecording gives the call's recording: fn is asked for its account
// when the record is built, after End (it may flush the recording).
func (c *Call) SetRecording(fn func() *Recording) {
	c.mu.Lock()
	c.recording = fn
	c.mu.Unlock()
}

// Event folds one live event into the record. It never blocks: a
// checkpoint it asks for is dropped (and counted) if the checkpoint queue
// is full.
func (c *Call) Event(e *messages.CallEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	ep := uint64(e.Epoch)
	switch e.Kind {
	case messages.EventState:
		c.state, c.stateEpoch = e.State, ep
	case messages.EventUserSpeaking:
		if c.state == messages.StateSpeaking {
			c.bargeIns++
			c.turn(c.stateEpoch).bargeIn = true
		}
	case messages.EventUserTurn:
		c.turn(ep)
		c.lines = append(c.lines, lineState{epoch: ep, speaker: SpeakerCaller, text: append([]byte(nil), e.Text...), at: e.At, keys: e.Keys})
	case messages.EventBotWord:
		l := c.botLine(ep, e.At)
		if len(l.text) > 0 {
			l.text = append(l.text, ' ')
		}
		l.text = append(l.text, e.Text...)
	case messages.EventBotDone:
		t := c.turn(ep)
		if e.Cut {
			t.cut = true
			if l := c.findBotLine(ep); l != nil {
				l.cut = true
			}
		}
	case messages.EventLatency:
		t := c.turn(ep)
		t.latency, t.stages = e.Latency, e.Stages
		if e.Marks != nil {
			t.marks = e.Marks
		}
		c.ckpt = true
		c.scheduleLocked()
	case messages.EventRound:
		if e.Round < 1 {
			return
		}
		t := c.turn(ep)
		for len(t.rounds) < e.Round {
			t.rounds = append(t.rounds, time.Time{})
		}
		if t.rounds[e.Round-1].IsZero() {
			t.rounds[e.Round-1] = e.At
		}
	case messages.EventTool:
		if e.Audit == nil {
			return // a running line: the settled one carries the audit
		}
		c.turn(ep)
		c.tools = append(c.tools, toolState{epoch: ep, id: e.Call, name: e.Text, settled: e.At, audit: e.Audit})
		c.ckpt = true
		c.scheduleLocked()
	case messages.EventUsage:
		if e.Usage != nil {
			c.addUsage(e.Usage)
		}
	case messages.EventRestart:
		if c.restarts == nil {
			c.restarts = make(map[string]int, 2)
		}
		c.restarts[e.Text]++
	case messages.EventFailover:
		if e.Failover != nil {
			c.failovers = append(c.failovers, Failover{Stage: e.Text, From: e.Failover.From, To: e.Failover.To, At: e.At})
		}
	}
}

// turn is the turn of epoch ep, added if new. Epochs come in order, so
// the search from the end stops at once.
func (c *Call) turn(ep uint64) *turnState {
	for i := len(c.turns) - 1; i >= 0; i-- {
		if c.turns[i].epoch == ep {
			return &c.turns[i]
		}
		if c.turns[i].epoch < ep {
			break
		}
	}
	c.turns = append(c.turns, turnState{epoch: ep})
	if n := len(c.turns); n > 1 && c.turns[n-2].epoch > ep {
		// An epoch out of order (not seen from the session): keep the
		// list sorted by epoch.
		t := c.turns[n-1]
		i := n - 1
		for ; i > 0 && c.turns[i-1].epoch > ep; i-- {
			c.turns[i] = c.turns[i-1]
		}
		c.turns[i] = t
		return &c.turns[i]
	}
	return &c.turns[len(c.turns)-1]
}

func (c *Call) findBotLine(ep uint64) *lineState {
	for i := len(c.lines) - 1; i >= 0; i-- {
		if l := &c.lines[i]; l.speaker == SpeakerBot && l.epoch == ep {
			return l
		}
	}
	return nil
}

// botLine is the bot's line of epoch ep, added (at at) if new.
func (c *Call) botLine(ep uint64, at time.Time) *lineState {
	if n := len(c.lines); n > 0 {
		if l := &c.lines[n-1]; l.speaker == SpeakerBot && l.epoch == ep {
			return l
		}
	}
	if l := c.findBotLine(ep); l != nil {
		return l
	}
	c.turn(ep)
	c.lines = append(c.lines, lineState{epoch: ep, speaker: SpeakerBot, at: at, text: make([]byte, 0, 64)})
	return &c.lines[len(c.lines)-1]
}

func (c *Call) addUsage(u *messages.ProviderUsage) {
	var a *Usage
	for i := range c.usage {
		if x := &c.usage[i]; x.Kind == u.Kind && x.Vendor == u.Vendor && x.Model == u.Model {
			a = x
			break
		}
	}
	if a == nil {
		c.usage = append(c.usage, Usage{Kind: u.Kind, Vendor: u.Vendor, Model: u.Model})
		a = &c.usage[len(c.usage)-1]
	}
	a.Requests++
	a.InputTokens += u.InputTokens
	a.OutputTokens += u.OutputTokens
	a.CachedTokens += u.CachedTokens
	a.AudioSeconds += u.Audio.Seconds()
	a.Characters += u.Characters
}

// End finishes the call: the record is built, redacted and journaled by
// the writer goroutine. It never blocks: a record that finds the queue
// full is dropped, counted and logged (the live journal still holds the
// call, so the next start recovers it).
func (c *Call) End(e messages.CallEnded) {
	c.mu.Lock()
	if c.ended {
		c.mu.Unlock()
		return
	}
	c.ended, c.end, c.endedAt = true, e, time.Now()
	c.mu.Unlock()
	c.s.enqueue(c)
}

// scheduleLocked puts the call in the checkpoint queue unless it is
// there already. Called with c.mu held.
func (c *Call) scheduleLocked() {
	if c.liveQueued {
		return
	}
	select {
	case c.s.live <- c:
		c.liveQueued = true
	default:
		c.s.st.droppedCheckpoints.Add(1)
	}
}
