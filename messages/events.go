package messages

import "time"

// EventKind tells the live events of a call apart.
type EventKind int

// The kinds of live call events.
const (
	// EventState: the call's state changed (State: listening, thinking,
	// speaking, ending).
	EventState EventKind = iota + 1
	// EventUserSpeaking: the caller started speaking (barge-in if the bot
	// was speaking).
	EventUserSpeaking
	// EventUserTurn: the caller's turn ended; Text is what was heard.
	EventUserTurn
	// EventBotWord: a word of the bot's answer of Epoch started playing;
	// Text is the word. Words of a cut answer stop at the cut.
	EventBotWord
	// EventBotDone: the answer of Epoch finished playing (Cut: stopped by
	// a barge-in or a failure, before its end).
	EventBotDone
	// EventLatency: the first audio of the answer of Epoch went out
	// Latency after the end of the caller's speech.
	EventLatency
	// EventTool: a tool call of the answer of Epoch started or settled
	// (Text: the tool's name, never its arguments; Call, Outcome, Detail
	// and Subject say which call and what happened).
	EventTool
	// EventRestart: a stage of the call was restarted (Text: the stage),
	// by its supervisor after a failure or by an operator. For operators:
	// the caller's page is not told.
	EventRestart
	// EventUsage: a provider was used (Usage says for what: an LLM
	// response's tokens, an STT session's audio, a TTS context's text and
	// audio). For the call record; the caller's page is not told.
	EventUsage
	// EventRound: round Round (1, 2, ...) of the LLM loop of Epoch got
	// its first token At. For the call record.
	EventRound
	// EventFailover: a stage (Text) switched from one provider or model
	// to another (Failover). For the call record and operators.
	EventFailover
)

var eventNames = [...]string{"", "state", "user_speaking", "user_turn", "bot_word", "bot_done", "latency", "tool", "restart", "usage", "round", "failover"}

func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "unknown"
}

// The states of EventState.
const (
	StateListening = "listening"
	StateThinking  = "thinking"
	StateSpeaking  = "speaking"
	StateEnded     = "ended"
)

// CallEvent is a live account of a call for an observer (the caller's own
// page, an operator console): what the caller said, the bot's words as they
// play, each turn's latency, the call's state. Stages send it to the session,
// which hands it to session.Config.OnEvent. It carries transcripts: it is
// for the call's own participants and operators, never for logs.
type CallEvent struct {
	Kind  EventKind
	Epoch Epoch
	Text  string
	// Keys counts the key presses a user turn's Text holds ("The caller
	// pressed 4 2 #"): they may be a PIN, so the debug log of what was
	// said withholds such a turn's text.
	Keys    int
	State   string
	Cut     bool
	Latency time.Duration
	// Stages split an EventLatency's Latency by the stage that took it, in
	// turn order; their durations sum to Latency (see TurnStages).
	Stages []TurnStage
	// Marks are an EventLatency's turn timeline as the session had it at
	// the first audio out (a copy, the receiver's to keep): for in-process
	// observers (load tests, records). The call's page does not get it.
	Marks map[MarkKind]time.Time
	// Call is an EventTool's call id (ToolCall.ID).
	Call string
	// Outcome is what an EventTool's call did, for the caller's page: one
	// of the Tool* outcomes below (not the contract's outcome names,
	// which are for the record and logs).
	Outcome string
	// Detail is an EventTool's short caller-facing line: a done call's
	// summary (agent.Output.Summary: "reference B-0001"), why a call
	// failed or was refused, in a few words. Never arguments.
	Detail string
	// Subject names the tool an EventTool is about when it is not the
	// called one: a confirm_pending call is about the held tool it
	// confirms ("" when that is not known).
	Subject string
	// Audit is an EventTool's settled call as the record keeps it: the
	// contract's outcome, when it started, the idempotency key's digest,
	// its arguments and result (the record's policy decides whether they
	// are kept). Nil on a running line. Never for the page or logs.
	Audit *ToolAudit
	// Usage is an EventUsage's account.
	Usage *ProviderUsage
	// Round is an EventRound's round number.
	Round int
	// Failover is an EventFailover's switch.
	Failover *Failover
	At       time.Time
}

// ToolAudit is a settled tool call for the call record.
type ToolAudit struct {
	// Outcome is the contract's outcome name (ToolResult.Outcome).
	Outcome string
	Started time.Time
	// KeyDigest is the sha256 (hex) of the SideEffect call's idempotency
	// key ("" for a ReadOnly call).
	KeyDigest string
	// Args are the call's arguments as the model sent them; Result the
	// content the model got back. Both may hold personal data: the
	// record's redactor and policy see them before anything is stored.
	Args   []byte
	Result string
}

// The kinds of ProviderUsage.
const (
	UsageLLM = "llm"
	UsageSTT = "stt"
	UsageTTS = "tts"
)

// ProviderUsage is one use of a provider: an LLM response (tokens), an
// STT session (audio sent), a TTS context (text sent, audio received).
// Vendor is the provider's name (providers' Name, "openai", "deepgram",
// "flite", "mock"), Model its model where it has one.
type ProviderUsage struct {
	Kind                                    string
	Vendor, Model                           string
	InputTokens, OutputTokens, CachedTokens int
	Audio                                   time.Duration
	Characters                              int
}

// Failover is a stage's switch from one provider to another (the VAD's
// model to the energy detector).
type Failover struct {
	From, To string
}

// The outcomes of an EventTool, as the caller's page shows them.
const (
	// CallRunning: the call started (or goes on past its slot's timeout).
	CallRunning = "running"
	// CallHeld: the call waits for the caller's confirmation.
	CallHeld = "held"
	// CallDone: the call ran; Detail is its summary.
	CallDone = "done"
	// CallRefused: the engine refused it (a confirmation without the
	// caller's reply, a repeat of a call already done, the turn's budget).
	CallRefused = "refused"
	// CallCancelled: it did not run to its end (the caller interrupted,
	// the turn was over).
	CallCancelled = "cancelled"
	// CallFailed: it ran and failed, timed out, or its outcome is unknown.
	CallFailed = "failed"
)

// Greet makes the turn actor speak Line as the bot's first answer, in a
// new epoch, unless the caller already spoke. After, when set, is how
// long the turn waits for the caller's first words before it greets (an
// outbound call: the callee says "hello?" first, an answering machine
// speaks at length); the greeting is dropped when they came.
type Greet struct {
	Line  string
	After time.Duration
}
