package opus

import "errors"

// The sentinel errors of the package; every error it returns wraps one of
// them (and, where libopus reported the failure, the libopus error too), so
// a caller tells a bad configuration, a caller bug and bad input from the
// network apart with errors.Is.
var (
	// ErrInvalidConfig is wrapped by every Validate error.
	ErrInvalidConfig = errors.New("opus: invalid config")
	// ErrPCMSize: the PCM buffer handed to Encode is not exactly one frame,
	// or the one handed to a decode call is too short for the audio it must
	// hold. A caller bug; the stream state is unchanged.
	ErrPCMSize = errors.New("opus: wrong pcm buffer size")
	// ErrPacketBuffer: the output buffer handed to Encode is empty, or
	// libopus found it too small (it usually fits the packet to the buffer
	// instead; see Encode).
	ErrPacketBuffer = errors.New("opus: packet buffer too small")
	// ErrCorruptPacket: a received packet is empty, malformed or rejected by
	// libopus. Counted in Stats.Corrupt; the caller conceals the frame.
	ErrCorruptPacket = errors.New("opus: corrupt packet")
	// ErrCodec: libopus failed for another reason.
	ErrCodec = errors.New("opus: codec failure")
	// ErrNoCgo: the binary was built without cgo (CGO_ENABLED=0), so
	// libopus is not linked; NewEncoder and NewDecoder fail with it (after
	// checking the config), wrapped in ErrCodec.
	ErrNoCgo = errors.New("opus: built without cgo; libopus is not linked (build with CGO_ENABLED=1 and libopus-dev, pkg-config installed)")
)
