package journal

import "errors"

var (
	// ErrInvalidConfig: a journal setting is wrong; the message says which.
	ErrInvalidConfig = errors.New("journal: invalid config")
	// ErrLocked: another journal (in this process or another) has the
	// directory open.
	ErrLocked = errors.New("journal: directory in use")
	// ErrKind: Append was given kind 0 or one of the journal's reserved
	// kinds (FirstReservedKind and above).
	ErrKind = errors.New("journal: invalid kind")
	// ErrTooLarge: the payload is over MaxPayload.
	ErrTooLarge = errors.New("journal: payload too large")
	// ErrUnknownSeq: Ack was given a seq this journal never handed out.
	ErrUnknownSeq = errors.New("journal: unknown seq")
	// ErrWrite: a write failed (disk full, say) and nothing of it was
	// kept; the journal is still usable and the call can be retried.
	ErrWrite = errors.New("journal: write failed")
	// ErrBroken: an fdatasync (or the repair of a failed write) failed,
	// so what is on disk is no longer known; the journal refuses every
	// call from then on. Close it and open it again (a restart): Open
	// reads what the disk really holds.
	ErrBroken = errors.New("journal: broken")
	// ErrClosed: the journal was closed.
	ErrClosed = errors.New("journal: closed")
)
