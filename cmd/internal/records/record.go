package records

import (
	"encoding/json"
	"time"
)

// SchemaVersion is the version of the Record document (Record.Version).
const SchemaVersion = 1

// The end reasons a record adds to the live vocabulary (conn.Reason*,
// the session's and operators' reasons): the node died while the call
// was live, and the record was rebuilt from the live-call journal.
const ReasonNodeCrashed = "node_crashed"

// Record is what is kept of one call. It is written once, when the call
// ended (or, for a call live when its node crashed, when the node came
// back); the sweeper and erasures may later remove fields or all of it.
// Every text field has been through the redactor before a Record leaves
// the service (see Redactions).
type Record struct {
	Version int    `json:"version"`
	CallID  string `json:"call_id"`
	Node    string `json:"node"`
	// Transport: webrtc, pcm, twilio, telnyx, sip, sip-out, ...
	// (serve's transport names). Direction: inbound or outbound.
	Transport string `json:"transport"`
	Direction string `json:"direction"`
	// Trunk names the SIP trunk of the call, if any.
	Trunk string `json:"trunk,omitempty"`
	// Agent is the agent's name; AgentDigest the sha256 (hex) of its
	// file as loaded, so a record says which version of the agent spoke.
	Agent       string `json:"agent"`
	AgentDigest string `json:"agent_digest,omitempty"`
	// Caller and Callee are the parties as the numbers policy keeps them.
	Caller Party `json:"caller,omitzero"`
	Callee Party `json:"callee,omitzero"`

	Started  time.Time `json:"started"`
	Answered time.Time `json:"answered,omitzero"`
	Ended    time.Time `json:"ended"`
	// EndReason is the live events' vocabulary (hangup, vanished, no
	// input, an operator's reason, ...) or ReasonNodeCrashed. GaveUp names
	// the stage whose failures ended the call.
	EndReason string `json:"end_reason"`
	GaveUp    string `json:"gave_up,omitempty"`

	Turns    []Turn `json:"turns"`
	BargeIns int    `json:"barge_ins"`
	// Transcript is the caller's turns and the bot's words as heard, in
	// order; nil when the policy or the sweeper removed it
	// (TranscriptRemoved says so).
	Transcript        []Line     `json:"transcript"`
	TranscriptRemoved bool       `json:"transcript_removed,omitempty"`
	Tools             []ToolCall `json:"tools"`
	// ToolDataRemoved: the tools' arguments and results were removed
	// (by policy at write time or by the sweeper).
	ToolDataRemoved bool      `json:"tool_data_removed,omitempty"`
	Usage           []Usage   `json:"usage"`
	Failures        []Failure `json:"failures"`
	// Restarts counts each stage's restarts (by its supervisor or an
	// operator).
	Restarts  map[string]int `json:"restarts,omitempty"`
	Failovers []Failover     `json:"failovers,omitempty"`
	Recording *Recording     `json:"recording,omitempty"`
	// TraceID is the call's OpenTelemetry trace (hex), when tracing is on.
	TraceID string `json:"trace_id,omitempty"`
	// Redactions counts what the redactor replaced, by kind (phone,
	// email, card, iban, dob, or a configured pattern's name).
	Redactions map[string]int `json:"redactions,omitempty"`
}

// Party is one end of a call as the numbers policy keeps it: the number
// itself (policy keep), its keyed hash (keep and hash: HMAC-SHA256 with
// the deployment's key, hex), or nothing (drop).
type Party struct {
	Number string `json:"number,omitempty"`
	Hash   string `json:"hash,omitempty"`
}

// Turn is one answered or attempted turn: its timeline marks by name
// (messages.MarkKind's names: vad_stop, stt_final, turn_end, llm_request,
// llm_first_token, tts_first_audio, first_audio_out, interrupt,
// tools_done), each LLM round's first token, its latency and stages.
type Turn struct {
	Epoch uint64               `json:"epoch"`
	Marks map[string]time.Time `json:"marks"`
	// RoundFirstTokens is the first token's time of each LLM round of
	// the turn, in round order (round 1 is Marks["llm_first_token"]).
	RoundFirstTokens []time.Time `json:"round_first_tokens,omitempty"`
	// LatencyMS: end of speech to first audio out (0: no audio went
	// out). Stages split it as the live latency event does.
	LatencyMS float64 `json:"latency_ms,omitempty"`
	Stages    []Stage `json:"stages,omitempty"`
	// BargeIn: the caller spoke over the answer of this epoch; Cut: the
	// answer stopped before its end.
	BargeIn bool `json:"barge_in,omitempty"`
	Cut     bool `json:"cut,omitempty"`
}

// Stage is one stage's share of a turn's latency.
type Stage struct {
	Name string  `json:"name"`
	MS   float64 `json:"ms"`
}

// The speakers of a Line.
const (
	SpeakerCaller = "caller"
	SpeakerBot    = "bot"
)

// Line is one line of the transcript: a caller's turn as recognised, or
// a bot's answer as heard (its words up to the cut, Cut set).
type Line struct {
	Epoch   uint64    `json:"epoch"`
	Speaker string    `json:"speaker"`
	Text    string    `json:"text"`
	At      time.Time `json:"at"`
	Cut     bool      `json:"cut,omitempty"`
	// Keys counts the key presses in a caller's line (DTMF).
	Keys int `json:"keys,omitempty"`
}

// ToolCall is one tool call of the call, as the tool contract settled it.
type ToolCall struct {
	Epoch uint64 `json:"epoch"`
	ID    string `json:"id"`
	Name  string `json:"name"`
	// Outcome is the contract's outcome name (ok, ok_truncated, failed,
	// timed_out, lost, already_done, duplicate, invalid_arguments, ...).
	Outcome    string    `json:"outcome"`
	Started    time.Time `json:"started"`
	Settled    time.Time `json:"settled,omitzero"`
	DurationMS float64   `json:"duration_ms"`
	// KeyDigest is the sha256 (hex) of the call's idempotency key
	// (SideEffect calls), never the key.
	KeyDigest string `json:"key_digest,omitempty"`
	// Args and Result are kept only where the tool-data policy allows,
	// redacted.
	Args   json.RawMessage `json:"args,omitempty"`
	Result string          `json:"result,omitempty"`
}

// The kinds of Usage.
const (
	UsageLLM = "llm"
	UsageSTT = "stt"
	UsageTTS = "tts"
)

// Usage is what one provider (vendor and model) was used for in the call.
type Usage struct {
	Kind         string  `json:"kind"`
	Vendor       string  `json:"vendor"`
	Model        string  `json:"model,omitempty"`
	Requests     int     `json:"requests"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	CachedTokens int     `json:"cached_tokens,omitempty"`
	AudioSeconds float64 `json:"audio_seconds,omitempty"`
	Characters   int     `json:"characters,omitempty"`
}

// Failure counts one stage's failures of one kind (providers.KindOf's
// kinds, or panic).
type Failure struct {
	Stage string `json:"stage"`
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Failover is a switch of a stage from one provider to the next.
type Failover struct {
	Stage string    `json:"stage"`
	From  string    `json:"from"`
	To    string    `json:"to"`
	At    time.Time `json:"at"`
}

// Recording says where the call's audio is and what it holds.
type Recording struct {
	// Format: wav or ogg (Opus). Key: the backend's name for it (a path
	// relative to the recordings directory, or an object key).
	Format     string  `json:"format"`
	Key        string  `json:"key"`
	Bytes      int64   `json:"bytes"`
	DurationMS float64 `json:"duration_ms"`
	// Paused are the spans recorded as silence on request (card numbers).
	Paused []Span `json:"paused,omitempty"`
	// DroppedFrames counts frames the writer could not keep up with
	// (written as silence); the call went on.
	DroppedFrames int  `json:"dropped_frames,omitempty"`
	Removed       bool `json:"removed,omitempty"`
}

// Span is a stretch of a call's time.
type Span struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}
