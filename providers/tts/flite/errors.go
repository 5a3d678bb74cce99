package flite

import "errors"

// Sentinel errors of the engine. A session that fails sends one TTSError
// event wrapping ErrSynthesis; Push, Flush and Cancel after Close return
// providers.ErrClosed.
var (
	// ErrInvalidConfig: a Config that Validate refuses.
	ErrInvalidConfig = errors.New("flite: invalid config")
	// ErrUnknownVoice: Config.Voice names no voice linked into the binary.
	ErrUnknownVoice = errors.New("flite: unknown voice")
	// ErrNoCgo: the binary was built without cgo (CGO_ENABLED=0), so
	// libflite is not linked and New cannot make an engine.
	ErrNoCgo = errors.New("flite: built without cgo; libflite is not linked (build with CGO_ENABLED=1 and flite1-dev installed)")
	// ErrSynthesis: libflite failed on a piece of text.
	ErrSynthesis = errors.New("flite: synthesis failed")
	// ErrContextClosed: Push or Flush to a context that was flushed or
	// cancelled.
	ErrContextClosed = errors.New("flite: context already flushed or cancelled")
	// ErrTextTooLong: a Push that would hold more unspoken text in the
	// context than Config.MaxContextBytes; the text is dropped whole.
	ErrTextTooLong = errors.New("flite: too much unspoken text in the context")
	// ErrTooManyContexts: a Push or Flush that would open more than
	// Config.MaxOpenContexts contexts at once.
	ErrTooManyContexts = errors.New("flite: too many open contexts")
	// ErrEmptyContextID: Push, Flush or Cancel with an empty context id.
	ErrEmptyContextID = errors.New("flite: empty context id")
)

// ErrCancelBacklog: a Cancel while too many earlier cancels wait for their
// acknowledgement (nobody reads Events).
var ErrCancelBacklog = errors.New("flite: too many unacknowledged cancels")
