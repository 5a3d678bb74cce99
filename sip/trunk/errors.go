package trunk

import (
	"errors"
	"fmt"
)

// Sentinel errors of the package; they are wrapped with detail.
var (
	// ErrInvalidConfig marks a bad Config (fix the settings).
	ErrInvalidConfig = errors.New("trunk: invalid config")
	// ErrAuthFailed is Verify's answer to every failed authorization,
	// whatever the cause (unknown user, wrong password, bad nonce,
	// malformed header): the peer is challenged again and learns nothing
	// more. The causes are told apart only in Stats.
	ErrAuthFailed = errors.New("trunk: authorization failed")
	// ErrStaleNonce is also matched by Verify's error when the digest
	// was right but its nonce had expired or was not ours any more: the
	// new challenge says stale=true (StaleChallenge) so that the client
	// retries with the new nonce without asking its user again.
	ErrStaleNonce = errors.New("trunk: stale nonce")
	// ErrNotAllowed: Acquire for a source outside the allowlist.
	ErrNotAllowed = errors.New("trunk: source not allowed")
	// ErrTooManyDialogs: the source already holds MaxDialogsPerSource
	// open dialogs.
	ErrTooManyDialogs = errors.New("trunk: too many dialogs from this source")
	// ErrRandom: the nonce source failed (an injected io.Reader; the
	// default crypto/rand does not fail).
	ErrRandom = errors.New("trunk: random source failed")
)

// errStale is Verify's error for a right digest with a stale nonce.
var errStale = fmt.Errorf("%w: %w", ErrAuthFailed, ErrStaleNonce)
