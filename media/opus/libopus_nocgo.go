//go:build !cgo

package opus

// libEncoder and libDecoder stand for the libopus states in a build
// without cgo, where libopus is not linked: NewEncoder and NewDecoder
// fail with ErrNoCgo, so their methods are never reached.
type (
	libEncoder struct{}
	libDecoder struct{}
)

// newLibEncoder fails: libopus is not linked without cgo.
func newLibEncoder(int, Application) (*libEncoder, error) { return nil, ErrNoCgo }

// newLibDecoder fails: libopus is not linked without cgo.
func newLibDecoder(int) (*libDecoder, error) { return nil, ErrNoCgo }

// bufferTooSmall is never reached.
func bufferTooSmall(error) bool { return false }

func (*libEncoder) SetBitrate(int) error                { return ErrNoCgo }
func (*libEncoder) SetComplexity(int) error             { return ErrNoCgo }
func (*libEncoder) SetInBandFEC(bool) error             { return ErrNoCgo }
func (*libEncoder) SetPacketLossPerc(int) error         { return ErrNoCgo }
func (*libEncoder) SetDTX(bool) error                   { return ErrNoCgo }
func (*libEncoder) Encode([]int16, []byte) (int, error) { return 0, ErrNoCgo }
func (*libDecoder) Decode([]byte, []int16) (int, error) { return 0, ErrNoCgo }
func (*libDecoder) DecodePLC([]int16) error             { return ErrNoCgo }
func (*libDecoder) DecodeFEC([]byte, []int16) error     { return ErrNoCgo }
