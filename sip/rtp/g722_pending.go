package rtp

import "fmt"

// G.722 waits for media/g722; until it builds, a G.722 session is refused.
func newG722Decoder() (decoder, error) {
	return nil, fmt.Errorf("%w: g722 is not built yet", ErrCodec)
}

func newG722Encoder() (encoder, error) {
	return nil, fmt.Errorf("%w: g722 is not built yet", ErrCodec)
}
