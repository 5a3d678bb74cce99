package providers

import (
	"context"
	"time"
)

// TTS opens streaming speech synthesis sessions.
type TTS interface {
	// Connect opens a session. Cancelling ctx ends it and closes Events.
	Connect(ctx context.Context) (TTSSession, error)
	// Warm opens a connection ahead of the first session.
	Warm(ctx context.Context) error
}

// TTSSession synthesizes text in contexts; one context is one answer (one
// epoch of the call). Pushes, flushes and cancels never block.
type TTSSession interface {
	// Push adds text to a context, opening it on first use.
	Push(contextID, text string) error
	// Flush asks the context to speak all it holds; Flushed follows the
	// context's last audio.
	Flush(contextID string) error
	// Cancel stops a context at once. The session acknowledges with a
	// Cancelled event; at most a couple of events of the context that were
	// already on their way may arrive before the ack, none after it.
	Cancel(contextID string) error
	// Events delivers audio and words in order. It is closed when the
	// session ends; a failed session sends one event with Err set first.
	Events() <-chan TTSEvent
	// Close ends the session; safe to call more than once.
	Close() error
}

// TTSEventKind tells the events of a TTS session apart.
type TTSEventKind int

// The kinds of TTS events.
const (
	// TTSAudio carries PCM16 mono audio at Rate.
	TTSAudio TTSEventKind = iota + 1
	// TTSWord says that Word starts at Offset within the context's audio.
	TTSWord
	// TTSFlushed follows the last audio of a flushed context.
	TTSFlushed
	// TTSCancelled acknowledges Cancel.
	TTSCancelled
	// TTSError reports a failed session (Err set); Events closes after it.
	TTSError
)

// TTSEvent is one event of a TTS session.
type TTSEvent struct {
	Kind      TTSEventKind
	ContextID string
	Rate      int
	PCM       []int16
	Word      string
	Offset    time.Duration
	Err       error
}
