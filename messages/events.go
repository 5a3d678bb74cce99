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
)

var eventNames = [...]string{"", "state", "user_speaking", "user_turn", "bot_word", "bot_done", "latency", "tool", "restart"}

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
	At      time.Time
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
