package pocketsphinx

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
//
// The pool also gives memory back after a burst: a decoder that stays
// idle for idleTimeout (none when it is negative) is freed, unless it is
// the last one alive, and then trim returns the C heap it held to the OS
// (freeing alone gives back little of it). Each idle decoder has a timer,
// started when it is given back and stopped when it is taken or the pool
// closes, so only a decoder idle for the whole timeout goes; the latest
// one given back is taken first, so the others age. The pool owns the
// timers and waits for a running expiry in close.
type pool struct {
	load        func() (recognizer, error)
	trim        func()
	idleTimeout time.Duration
	slots       chan struct{}
	expiring    sync.WaitGroup // expiries freeing a decoder

	mu       sync.Mutex
	idle     []*idleDecoder // the latest given back last
	loaded   int            // decoders alive (idle or checked out)
	acquired uint64         // checkouts
	waited   uint64         // checkouts that found every decoder busy
	timedOut uint64         // waits that ended without a decoder
	expired  uint64         // idle decoders freed after idleTimeout
	closed   bool
}

// idleDecoder is a decoder in the pool and its expiry (nil: none).
type idleDecoder struct {
	rec   recognizer
	timer *time.Timer
}

// newPool makes a pool of at most size decoders loaded by load. An idle
// decoder beyond the last is freed after idleTimeout (never when it is
// negative), then trim (may be nil) runs.
func newPool(size int, idleTimeout time.Duration, load func() (recognizer, error), trim func()) *pool {
	if trim == nil {
		trim = func() {}
	}
	return &pool{load: load, trim: trim, idleTimeout: idleTimeout, slots: make(chan struct{}, size), idle: make([]*idleDecoder, 0, size)}
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
		p.idle[k-1] = nil
		p.idle = p.idle[:k-1]
		p.acquired++
		p.mu.Unlock()
		if d.timer != nil {
			d.timer.Stop() // an expiry already running finds d gone
		}
		return d.rec, nil
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
// healthy and the pool is open (its idle timer starts), freed otherwise.
func (p *pool) release(d recognizer, healthy bool) {
	p.mu.Lock()
	keep := healthy && !p.closed
	if keep {
		e := &idleDecoder{rec: d}
		if p.idleTimeout >= 0 {
			e.timer = time.AfterFunc(p.idleTimeout, func() { p.expire(e) })
		}
		p.idle = append(p.idle, e)
	} else {
		p.loaded--
	}
	p.mu.Unlock()
	if !keep {
		d.free()
	}
	<-p.slots
}

// expire frees e when it is still idle and not the last decoder alive,
// then trims the C heap. The last one stays without a timer: another is
// loaded only while it is taken, and it gets a new timer when given back.
func (p *pool) expire(e *idleDecoder) {
	p.mu.Lock()
	i := slices.Index(p.idle, e)
	if i < 0 || p.closed || p.loaded <= 1 {
		p.mu.Unlock()
		return
	}
	p.idle = slices.Delete(p.idle, i, i+1)
	p.loaded--
	p.expired++
	p.expiring.Add(1) // before close's Wait: close sets closed under mu first
	p.mu.Unlock()
	defer p.expiring.Done()
	e.rec.free()
	p.trim()
}

func (p *pool) isClosed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrEngineClosed
	}
	return nil
}

// close stops the idle timers, waits for an expiry that is freeing a
// decoder, and frees the idle decoders; those checked out are freed when
// their sessions end. The C heap is trimmed when it freed any.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.loaded -= len(idle)
	p.mu.Unlock()
	for _, e := range idle {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
	p.expiring.Wait()
	for _, e := range idle {
		e.rec.free()
	}
	if len(idle) > 0 {
		p.trim()
	}
}

// stats reports the decoders alive and idle.
func (p *pool) stats() (loaded, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.loaded, len(p.idle)
}

// counts reports the checkouts, the waits, the waits that timed out and
// the idle decoders freed after idleTimeout.
func (p *pool) counts() (acquired, waited, timedOut, expired uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acquired, p.waited, p.timedOut, p.expired
}

// count adds one to a counter of p.
func (p *pool) count(c *uint64) {
	p.mu.Lock()
	*c++
	p.mu.Unlock()
}
