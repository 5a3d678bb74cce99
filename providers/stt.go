package providers

import "context"

// STT opens streaming speech-to-text sessions.
type STT interface {
	// Connect opens a session. ctx bounds the connect and the session: when
	// it is cancelled the session ends and Events closes.
	Connect(ctx context.Context) (STTSession, error)
	// Warm opens what can be opened ahead of the first session (DNS, TLS,
	// a pooled connection). It may be called more than once.
	Warm(ctx context.Context) error
}

// STTSession is one streaming recognition.
type STTSession interface {
	// SendAudio queues PCM16 mono audio at the session's rate. It must not
	// block and must not keep pcm after it returns.
	SendAudio(pcm []int16) error
	// Finalize asks for the final of what was sent so far; the answer is an
	// event with FromFinalize set.
	Finalize() error
	// Events delivers results in order. It is closed when the session ends;
	// a session that fails sends one event with Err set first.
	Events() <-chan STTEvent
	// Close ends the session and releases what it holds. Events closes
	// soon after. Close is safe to call more than once.
	Close() error
}

// STTEvent is one result of an STT session, or its failure (Err set).
type STTEvent struct {
	Text         string
	Final        bool
	SpeechFinal  bool
	FromFinalize bool
	Err          error
}

// SpeechMarker is an STTSession that holds a scarce resource (a local
// decoder) only while the caller speaks: it takes it when told that speech
// started and gives it back after the final of that utterance, so a caller
// who is silent costs nothing. The stt stage tells it each speech start
// the VAD decides (the VAD is the only judge of speech; the session does
// not detect it again). A session that holds nothing scarce does not
// implement it and streams every frame as usual.
type SpeechMarker interface {
	// SpeechStarted marks the start of the caller's speech at the current
	// end of the audio sent. It must not block; the audio sent just before
	// it (the VAD's onset lags the speech) is the session's to keep.
	SpeechStarted() error
}
