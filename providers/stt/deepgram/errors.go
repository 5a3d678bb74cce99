package deepgram

import "errors"

// Sentinel errors of the adapter. Failures of a session are the typed
// errors of package providers instead.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("deepgram: invalid config")
	// ErrMissingKey: the environment variable Config.APIKeyEnv names is
	// unset or empty. The error names the variable, never a value.
	ErrMissingKey = errors.New("deepgram: API key variable is empty")
	// ErrAudioDropped: SendAudio found the send queue full (the service
	// or the network is slower than real time); the frame was dropped and
	// counted, the session goes on.
	ErrAudioDropped = errors.New("deepgram: audio frame dropped, send queue full")
	// ErrControlDropped: Finalize found the send queue full; nothing was
	// sent, the session goes on.
	ErrControlDropped = errors.New("deepgram: control message dropped, send queue full")
)
