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
	// EventTool: a tool of the answer of Epoch was called (Text: its name
	// only, never its arguments).
	EventTool
)

var eventNames = [...]string{"", "state", "user_speaking", "user_turn", "bot_word", "bot_done", "latency", "tool"}

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
	At      time.Time
}

// Greet makes the turn actor speak Line as the bot's first answer, in a
// new epoch, unless the caller already spoke.
type Greet struct {
	Line string
}
