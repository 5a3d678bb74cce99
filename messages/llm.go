package messages

import "time"

// TextDelta is text of the bot's answer for Epoch, in order. The round sends
// it to the llm actor, which records it and forwards it to tts.
type TextDelta struct {
	Epoch Epoch
	Round int
	Text  string
}

// TextFlush asks tts to speak what it holds for Epoch now (before a tool
// runs). Final marks the end of the epoch's text: no more deltas follow.
type TextFlush struct {
	Epoch Epoch
	Final bool
}

// Filler is a filler phrase of Epoch, spoken while a round's tools run.
// The tts stage plays its pre-rendered clip when it has one (after the
// audio of the text before it, and before any text after it), and
// otherwise speaks it through the provider like a delta and a flush.
type Filler struct {
	Epoch Epoch
	Round int
	Text  string
}

// RoundStarted marks a request to the LLM for Epoch (round 0 is the first).
type RoundStarted struct {
	Epoch Epoch
	Round int
	At    time.Time
}

// RoundFirstToken marks the first response event of a round.
type RoundFirstToken struct {
	Epoch Epoch
	Round int
	At    time.Time
}

// RoundFailed reports that a round could not finish: the provider failed or
// the round's deadline passed. The llm actor speaks the fallback line.
type RoundFailed struct {
	Epoch Epoch
	Round int
	Err   error
	At    time.Time
}

// EpochDone is sent by a round to its parent when the epoch's answer is
// complete (all rounds done, final flush sent).
type EpochDone struct {
	Epoch Epoch
}
