//go:build cgo

package recording

import (
	"fmt"

	hraban "gopkg.in/hraban/opus.v2"
)

// oggBuilt: this build links libopus.
const oggBuilt = true

// oggBitrate is the stereo stream's bit rate: at 48 kbit/s libopus
// codes the two channels jointly enough that one leaks into the other
// (TestOggRecording: an eighth of the caller's level in the bot's
// channel); at 64 kbit/s nothing leaks.
const oggBitrate = 64000

func newOgg(callID string, rate int) (container, error) {
	enc, err := hraban.NewEncoder(rate, 2, hraban.AppVoIP)
	if err == nil {
		err = enc.SetBitrate(oggBitrate)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: an Opus encoder at %d Hz: %w", ErrInvalidCall, rate, err)
	}
	return newOggOpus(callID, rate, enc), nil
}
