package opclient

import (
	"encoding/json"
	"time"
)

// CallSummary is a live call as the operator API lists it.
type CallSummary struct {
	ID   string `json:"id"`
	Node string `json:"node"`
	// Transport: webrtc, pcm (the PCM websocket), twilio, sip, sip-out
	// (a call the node placed).
	Transport string `json:"transport"`
	Agent     string `json:"agent"`
	// State: starting (admitted, no state yet), listening, thinking,
	// speaking, ended.
	State   string    `json:"state"`
	Started time.Time `json:"started"`
	AgeMS   int64     `json:"age_ms"`
	// Turns counts the answered turns; LastTurnMS is the last one's
	// latency from the end of speech to the first audio out, nil before
	// the first.
	Turns      int      `json:"turns"`
	LastTurnMS *float64 `json:"last_turn_ms,omitempty"`
	// Restarts counts the call's stage restarts (supervision and
	// operator).
	Restarts int `json:"restarts"`
}

// Description is one actor of a call's tree: the session is the root,
// its stages its children. A stage that did not answer in time has the
// state "unresponsive".
type Description struct {
	Name     string            `json:"name"`
	State    string            `json:"state"`
	Mailbox  int               `json:"mailbox"`
	Restarts int               `json:"restarts"`
	Counters map[string]uint64 `json:"counters,omitempty"`
	// Info holds facts that are not counts (a codec, a dialog state).
	Info     map[string]string `json:"info,omitempty"`
	Children []*Description    `json:"children,omitempty"`
}

// TurnTimeline is one turn's marks: milliseconds from the turn's
// vad_stop (from its earliest mark when it has none), At being that
// zero's wall time. Only the marks the turn has are present.
type TurnTimeline struct {
	Epoch   uint64             `json:"epoch"`
	At      time.Time          `json:"at"`
	MarksMS map[string]float64 `json:"marks_ms"`
}

// The marks of a turn the API names.
const (
	MarkVADStop       = "vad_stop"
	MarkVADDetected   = "vad_detected"
	MarkSTTFinal      = "stt_final"
	MarkTurnEnd       = "turn_end"
	MarkLLMRequest    = "llm_request"
	MarkLLMFirstToken = "llm_first_token"
	MarkToolsDone     = "tools_done"
	MarkTTSFirstAudio = "tts_first_audio"
	MarkFirstAudioOut = "first_audio_out"
	MarkInterrupt     = "interrupt"
)

// Drain says why and since when a node admits no call.
type Drain struct {
	// By: "operator" or "shutdown".
	By          string    `json:"by"`
	Started     time.Time `json:"started"`
	LiveAtStart int       `json:"live_at_start"`
}

// Admission is a node's measured admission (serve --admission measured).
type Admission struct {
	// Load is the estimated share of the node's cores its live calls use;
	// Ceiling the share it admits up to.
	Load    float64 `json:"load"`
	Ceiling float64 `json:"ceiling"`
	PerCall float64 `json:"per_call_cores"`
	Cores   float64 `json:"cores"`
}

// NodeInfo is a node as the operator API shows it.
type NodeInfo struct {
	Node string `json:"node"`
	// Self: the node that answered.
	Self      bool `json:"self"`
	LiveCalls int  `json:"live_calls"`
	MaxCalls  int  `json:"max_calls"`
	// Draining: the node admits no new call (Drain says why).
	Draining  bool       `json:"draining"`
	Drain     *Drain     `json:"drain,omitempty"`
	Admission *Admission `json:"admission,omitempty"`
	UptimeMS  int64      `json:"uptime_ms"`
}

// CallList answers List: the answering node and every node's live calls.
type CallList struct {
	Node  string        `json:"node"`
	Calls []CallSummary `json:"calls"`
	raw   json.RawMessage
}

// JSON is the server's answer as it came.
func (l *CallList) JSON() json.RawMessage { return l.raw }

// CallDetail answers Show: the call, its actor tree and its turns'
// timelines, oldest first.
type CallDetail struct {
	Call  CallSummary    `json:"call"`
	Tree  *Description   `json:"tree"`
	Turns []TurnTimeline `json:"turns"`
	raw   json.RawMessage
}

// JSON is the server's answer as it came.
func (d *CallDetail) JSON() json.RawMessage { return d.raw }

// NodeList answers Nodes.
type NodeList struct {
	Nodes []NodeInfo `json:"nodes"`
	raw   json.RawMessage
}

// JSON is the server's answer as it came.
func (l *NodeList) JSON() json.RawMessage { return l.raw }
