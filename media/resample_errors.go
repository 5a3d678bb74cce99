package media

import "errors"

// ErrUnsupportedRate is wrapped by NewResampler when a sample rate is not
// one of 8000, 16000, 24000 and 48000 Hz.
var ErrUnsupportedRate = errors.New("media: unsupported sample rate")
