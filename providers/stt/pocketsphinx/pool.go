package pocketsphinx

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// recognizer is what a session needs from a decoder (decoder_cgo.go). It
// is used by one goroutine at a time.
type recognizer interface {
	// process decodes 16 kHz PCM16 mono; it does not keep pcm.
	process(pcm []int16) error
	// hypothesis is the best text of the utterance so far.
	hypothesis() string
	// endUtterance ends the utterance and returns its text.
	endUtterance() (string, error)
	// startUtterance begins the next utterance.
	startUtterance() error
	// free releases the decoder for good.
	free()
}

// pool keeps loaded decoders for reuse: loading one reads the whole model
// (hundreds of milliseconds, tens of MB), and one decoder serves one
// session at a time. At most size decoders are alive: a token in slots is
// a decoder checked out (or being loaded), idle ones hold none, and a new
// one is loaded only when none is idle.
type pool struct {
	load  func() (recognizer, error)
	slots chan struct{}

	mu       sync.Mutex
	idle     []recognizer
	loaded   int    // decoders alive (idle or checked out)
	acquired uint64 // checkouts
	waited   uint64 // checkouts that found every decoder busy
	timedOut uint64 // waits that ended without a decoder
	closed   bool
}

func newPool(size int, load func() (recognizer, error)) *pool {
	return &pool{load: load, slots: make(chan struct{}, size), idle: make([]recognizer, 0, size)}
}

// acquire checks out a decoder, waiting at most timeout (and ctx) for one
// to be free, and loading one when none is idle.
func (p *pool) acquire(ctx context.Context, timeout time.Duration) (recognizer, error) {
	if err := p.isClosed(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pocketsphinx: connect: %w", err)
	}
	select {
	case p.slots <- struct{}{}:
	default:
		p.count(&p.waited)
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case p.slots <- struct{}{}:
		case <-t.C:
			p.count(&p.timedOut)
			return nil, &providers.Timeout{Op: fmt.Sprintf("pocketsphinx: a free decoder (all %d busy)", cap(p.slots))}
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				p.count(&p.timedOut)
				return nil, &providers.Timeout{Op: fmt.Sprintf("pocketsphinx: a free decoder (all %d busy)", cap(p.slots))}
			}
			return nil, fmt.Errorf("pocketsphinx: waiting for a free decoder: %w", ctx.Err())
		}
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return nil, ErrEngineClosed
	}
	if k := len(p.idle); k > 0 {
		d := p.idle[k-1]
		p.idle = p.idle[:k-1]
		p.acquired++
		p.mu.Unlock()
		return d, nil
	}
	p.mu.Unlock()
	d, err := p.load()
	if err != nil {
		<-p.slots
		return nil, err
	}
	p.mu.Lock()
	p.loaded++
	p.acquired++
	p.mu.Unlock()
	return d, nil
}

// release gives a decoder back: kept for the next session when it is
// healthy and the pool is open, freed otherwise.
func (p *pool) release(d recognizer, healthy bool) {
	p.mu.Lock()
	keep := healthy && !p.closed
	if keep {
		p.idle = append(p.idle, d)
	} else {
		p.loaded--
	}
	p.mu.Unlock()
	if !keep {
		d.free()
	}
	<-p.slots
}

func (p *pool) isClosed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrEngineClosed
	}
	return nil
}

// close frees the idle decoders; those checked out are freed when their
// sessions end.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.loaded -= len(idle)
	p.mu.Unlock()
	for _, d := range idle {
		d.free()
	}
}

// stats reports the decoders alive and idle.
func (p *pool) stats() (loaded, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.loaded, len(p.idle)
}

// counts reports the checkouts, the waits and the waits that timed out.
func (p *pool) counts() (acquired, waited, timedOut uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acquired, p.waited, p.timedOut
}

// count adds one to a counter of p.
func (p *pool) count(c *uint64) {
	p.mu.Lock()
	*c++
	p.mu.Unlock()
}
