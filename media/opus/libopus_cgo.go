//go:build cgo

package opus

import (
	"errors"

	hraban "gopkg.in/hraban/opus.v2"
)

// libEncoder and libDecoder are the libopus states, through hraban.
type (
	libEncoder = hraban.Encoder
	libDecoder = hraban.Decoder
)

// newLibEncoder makes a mono libopus encoder tuned for app.
func newLibEncoder(rate int, app Application) (*libEncoder, error) {
	a := hraban.AppVoIP
	switch app {
	case ApplicationAudio:
		a = hraban.AppAudio
	case ApplicationLowDelay:
		a = hraban.AppRestrictedLowdelay
	}
	return hraban.NewEncoder(rate, 1, a)
}

// newLibDecoder makes a mono libopus decoder.
func newLibDecoder(rate int) (*libDecoder, error) { return hraban.NewDecoder(rate, 1) }

// bufferTooSmall tells whether libopus refused an Encode for its buffer.
func bufferTooSmall(err error) bool { return errors.Is(err, hraban.ErrBufferTooSmall) }
