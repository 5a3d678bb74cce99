package messages

import "time"

// UserTurn ends the caller's turn: the turn actor hands the transcript of
// the utterance to the llm actor, which starts a round for Epoch.
type UserTurn struct {
	Epoch Epoch
	Text  string
	// SpeechStart is the backdated start of the utterance's speech (a
	// confirmation gate needs to know whether the reply began after the
	// question).
	SpeechStart time.Time
	// SpeechEnd is the backdated end of the caller's speech.
	SpeechEnd time.Time
	// At is when the turn actor decided the turn was over (for a
	// speculative turn: when it guessed so).
	At time.Time
	// Speculative says the turn has not ended yet: the caller went quiet
	// and the transcript is final, but the end-of-turn delay still runs.
	// The llm actor answers it without letting anything out (no text to
	// TTS, SideEffect calls held) until Commit, and Discard takes it back.
	Speculative bool
}

// TurnEstimate is the end-of-turn model's view of the pause that began at
// StopAt (the backdated end of the caller's speech): P is the probability
// that the turn is complete. Err says the model could not answer (the turn
// then waits the policy's longest delay). The vad actor sends it to turn.
type TurnEstimate struct {
	StopAt time.Time
	P      float32
	Err    error
}

// Commit ends a speculative turn: the caller stayed quiet through the
// end-of-turn delay. The llm actor lets the speculation's held output go
// and has the tools actor run its held SideEffect calls. Turn is the turn
// as it ended; when no speculation of it is running (the llm actor was
// busy, or a restart lost it) the llm actor takes it as an ordinary turn,
// so a commit never loses the caller's words.
type Commit struct {
	Turn UserTurn
}

// Discard takes back the speculative turn of Epoch: the caller spoke again
// (or the transcript changed) before the turn ended. Nothing of it was
// heard; its held SideEffect calls never run and its messages leave the
// context. Its epoch is never used again.
type Discard struct {
	Epoch Epoch
}

// Interrupt stops everything of epochs older than Epoch: the running round,
// the TTS context and the audio queued in the pacer. The turn actor sends it
// when the caller barges in (Epoch is then the new epoch).
type Interrupt struct {
	Epoch Epoch
	At    time.Time
}

// PlayoutDone says the pacer played the last audio of Epoch (or that the
// epoch ended without audio). The bot is idle again unless a newer epoch runs.
type PlayoutDone struct {
	Epoch Epoch
	At    time.Time
}

// Say makes the llm actor speak a fixed line as the whole answer of Epoch
// (the fallback line when a stage gave up). It is added to the context as
// an assistant message and cut to what was heard like any answer.
type Say struct {
	Epoch Epoch
	Text  string
}

// EndCall asks the turn actor to end the call after speaking Line: it stops
// the bot's current output, has the line spoken in a new epoch and reports
// CallDrained to the session once it was played (or could not be).
//
// With AfterPlayout (the end_call tool: the model said goodbye in the same
// answer) nothing is stopped and Line is not used: the call ends once the
// current answer has played; a barge-in no longer interrupts it.
type EndCall struct {
	Line         string
	AfterPlayout bool
}

// CallDrained tells the session that the closing line is out and the call
// can end.
type CallDrained struct{}
