package turn

import "errors"

// ErrInvalidConfig marks a bad Config (or DTMFConfig).
var ErrInvalidConfig = errors.New("turn: invalid config")
