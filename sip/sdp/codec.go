package sdp

import (
	"fmt"
	"strings"
)

// Codec names an audio codec as SDP's rtpmap does (matched without regard
// to case, RFC 4855 §3).
type Codec string

// The codecs we speak.
const (
	// PCMU is G.711 mu-law, static payload type 0, 8 kHz.
	PCMU Codec = "PCMU"
	// PCMA is G.711 A-law, static payload type 8, 8 kHz.
	PCMA Codec = "PCMA"
	// G722 is G.722, static payload type 9. Its audio is 16 kHz but its
	// RTP clock, and so its rtpmap, says 8000 (RFC 3551 §4.5.2).
	G722 Codec = "G722"
	// Opus has a dynamic payload type; its rtpmap is always opus/48000/2
	// whatever is sent (RFC 7587 §7).
	Opus Codec = "opus"
)

// defaultCodecs is our preference when Config.Codecs is empty: wideband
// first (the speech recogniser wants 16 kHz; an 8 kHz call loses the band
// above 3.4 kHz for good), Opus before G.722 (it survives loss with
// in-band FEC and costs less bandwidth), then G.711.
var defaultCodecs = [...]Codec{Opus, G722, PCMU, PCMA}

// DefaultCodecs returns a fresh copy of the default preference order.
func DefaultCodecs() []Codec { return append([]Codec(nil), defaultCodecs[:]...) }

// Names of the payload formats beside the codecs.
const (
	telephoneEvent = "telephone-event" // RFC 4733
	comfortNoise   = "CN"              // RFC 3389
)

// codecInfo is what SDP and the media path need of one codec.
type codecInfo struct {
	name       string // as written in our rtpmap
	staticPT   int    // -1: dynamic
	clock      int    // RTP clock, as in rtpmap
	sampleRate int    // the audio's rate
	channels   int    // as in rtpmap; 0: not written
}

// info of a codec we know; ok false for another.
func (c Codec) info() (codecInfo, bool) {
	switch c {
	case PCMU:
		return codecInfo{"PCMU", 0, 8000, 8000, 0}, true
	case PCMA:
		return codecInfo{"PCMA", 8, 8000, 8000, 0}, true
	case G722:
		return codecInfo{"G722", 9, 8000, 16000, 0}, true
	case Opus:
		return codecInfo{"opus", -1, 48000, 48000, 2}, true
	}
	return codecInfo{}, false
}

// Format is the codec as an rtpmap writes it: "PCMU/8000",
// "opus/48000/2".
func (c Codec) Format() string {
	in, ok := c.info()
	if !ok {
		return string(c)
	}
	if in.channels > 0 {
		return fmt.Sprintf("%s/%d/%d", in.name, in.clock, in.channels)
	}
	return fmt.Sprintf("%s/%d", in.name, in.clock)
}

// ParseCodec reads a codec name of the agent file, without regard to case
// ("pcmu", "G722", "Opus"); the error wraps ErrInvalidConfig.
func ParseCodec(s string) (Codec, error) {
	for _, c := range defaultCodecs {
		if strings.EqualFold(s, string(c)) {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: unknown codec (want one of opus, G722, PCMU, PCMA)", ErrInvalidConfig)
}

// matches tells whether a remote payload (rtpmap name, clock and channel
// count, 0 when not written) is codec c. G.711 and G.722 are mono; Opus
// must say 48000 and 2 channels, but a missing or 1 channel count is taken
// too (some gateways write opus/48000).
func (c Codec) matches(name string, clock, channels int) bool {
	in, ok := c.info()
	if !ok || !strings.EqualFold(name, in.name) || clock != in.clock {
		return false
	}
	if c == Opus {
		return channels == 0 || channels == 1 || channels == 2
	}
	return channels == 0 || channels == 1
}
