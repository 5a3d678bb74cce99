package transport

import (
	"sync"

	"github.com/brisvox/brisvox/messages"
)

// FramePool recycles input frames of one rate. Frames go back when the
// last stage that reads them calls Release.
type FramePool struct {
	rate int
	pool sync.Pool
}

// NewFramePool makes a pool of frames at rate.
func NewFramePool(rate int) *FramePool {
	p := &FramePool{rate: rate}
	p.pool.New = func() any { return messages.NewPooledFrame(rate, p.put) }
	return p
}

// Get returns a frame whose contents are undefined.
func (p *FramePool) Get() *messages.AudioFrame { return p.pool.Get().(*messages.AudioFrame) }

func (p *FramePool) put(f *messages.AudioFrame) { p.pool.Put(f) }
