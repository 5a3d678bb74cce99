package endofturn

import "errors"

// ErrInvalidConfig is wrapped by every PolicyConfig.Validate error: the
// settings are wrong, retrying cannot help.
var ErrInvalidConfig = errors.New("endofturn: invalid config")
