package webrtc

import (
	"encoding/json"
	"fmt"
	"sync"
)

// maxSignals bounds the candidates and error replies queued for one
// websocket: a call gathers a handful of candidates, and error replies
// beyond the bad-message bound are never needed.
const maxSignals = 64

// signalQueue holds what goes to the call's websocket until its writer
// takes it: signaling messages (candidates, error replies) first, then the
// live events. Events beyond the bound drop the oldest; it never blocks.
type signalQueue struct {
	mu       sync.Mutex
	signals  [][]byte
	events   [][]byte
	maxEvent int
	wake     chan struct{}
}

func newSignalQueue(maxEvents int) signalQueue {
	return signalQueue{maxEvent: maxEvents, wake: make(chan struct{}, 1)}
}

// poke wakes the writer.
func (q *signalQueue) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// pushSignal queues a signaling message; false when the queue is full.
func (q *signalQueue) pushSignal(b []byte) bool {
	q.mu.Lock()
	if len(q.signals) >= maxSignals {
		q.mu.Unlock()
		return false
	}
	q.signals = append(q.signals, b)
	q.mu.Unlock()
	q.poke()
	return true
}

// pushEvent queues an event, dropping the oldest when full; it reports
// whether one was dropped.
func (q *signalQueue) pushEvent(b []byte) (dropped bool) {
	q.mu.Lock()
	if len(q.events) >= q.maxEvent {
		copy(q.events, q.events[1:])
		q.events = q.events[:len(q.events)-1]
		dropped = true
	}
	q.events = append(q.events, b)
	q.mu.Unlock()
	q.poke()
	return dropped
}

// take moves everything queued, signals first, into dst.
func (q *signalQueue) take(dst [][]byte) [][]byte {
	q.mu.Lock()
	dst = append(dst, q.signals...)
	dst = append(dst, q.events...)
	clear(q.signals)
	clear(q.events)
	q.signals, q.events = q.signals[:0], q.events[:0]
	q.mu.Unlock()
	return dst
}

// Publish queues a live event for the call's websocket: v is encoded as
// JSON now, and sent once the websocket is open (events published before
// wait for it). The queue is bounded (Config.EventBuffer): when full, the
// oldest event is dropped and counted. It never blocks. It fails with
// ErrEncode when v does not encode, and with conn.ErrClosed
// (wrapped) once the call has ended.
func (c *Call) Publish(v any) error {
	if c.ended() {
		return c.closedErr()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: %T", ErrEncode, v)
	}
	if c.sig.pushEvent(b) {
		c.inc(cEventsDropped)
	}
	return nil
}

// signal queues a message of the server's own protocol.
func (c *Call) signal(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only the package's own message types come here.
		c.log.Error().Err(err).Msg("webrtc signal did not encode")
		return
	}
	if !c.sig.pushSignal(b) {
		c.inc(cEventsDropped)
	}
}
