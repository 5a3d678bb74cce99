package register

import "errors"

// Errors of the package, wrapped with detail.
var (
	// ErrInvalidConfig reports a Config that cannot work.
	ErrInvalidConfig = errors.New("register: invalid config")
	// ErrAuthFailed: the registrar challenged and we had no credentials,
	// or it challenged again after MaxAuthAttempts answers.
	ErrAuthFailed = errors.New("register: authentication failed")
	// ErrRefused: a final non-2xx answer other than a challenge or 423.
	ErrRefused = errors.New("register: refused")
	// ErrTransport: the REGISTER was not sent or got no final answer.
	ErrTransport = errors.New("register: no answer")
	// ErrBadResponse: a 200 or a 423 we cannot use (no usable expiry).
	ErrBadResponse = errors.New("register: bad response")
)
