package media

import "errors"

// ErrInvalidConfig is wrapped by every Validate error of this package, so a
// caller can tell a bad configuration (fix the settings) from a runtime
// failure with errors.Is.
var ErrInvalidConfig = errors.New("media: invalid config")
