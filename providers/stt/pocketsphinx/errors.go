package pocketsphinx

import "errors"

// Sentinel errors of the engine. Using a closed session is
// providers.ErrClosed.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("pocketsphinx: invalid config")
	// ErrSampleRate: a rate other than 16 kHz. The en-us model is a 16 kHz
	// wideband model, and pocketsphinx fails on 8 kHz telephone audio: at
	// 8 kHz it hears nothing, and the same audio resampled to 16 kHz comes
	// out mostly wrong (it lacks the band above 4 kHz the model expects).
	// Use it for wideband calls (WebRTC, G.722, Opus) only.
	ErrSampleRate = errors.New("pocketsphinx: only 16 kHz audio is supported (pocketsphinx fails on 8 kHz telephone audio)")
	// ErrNoCgo: the binary was built without cgo (CGO_ENABLED=0), so
	// libpocketsphinx cannot be linked.
	ErrNoCgo = errors.New("pocketsphinx: built without cgo; rebuild with CGO_ENABLED=1 and libpocketsphinx-dev, libsphinxbase-dev installed")
	// ErrLoad: libpocketsphinx could not load the model files.
	ErrLoad = errors.New("pocketsphinx: the model does not load")
	// ErrDecode: libpocketsphinx refused the audio or the utterance; the
	// session ends with it.
	ErrDecode = errors.New("pocketsphinx: decoding failed")
	// ErrEngineClosed: the STT was closed; it opens no more sessions.
	ErrEngineClosed = errors.New("pocketsphinx: engine closed")
	// ErrTooManyFinalizes: more Finalize calls are pending than the
	// session keeps (MaxPendingFinalizes).
	ErrTooManyFinalizes = errors.New("pocketsphinx: too many pending Finalize calls")
)

// errStop ends a session's pre-roll drain after a decoder failure that was
// already sent as the session's Err event; it never leaves the package.
var errStop = errors.New("pocketsphinx: stop")
