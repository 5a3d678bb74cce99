package deepgrammock

import (
	"sync"
	"time"

	"github.com/brisvox/brisvox/providers/internal/wsmock"
)

// paced is one message waiting for its time.
type paced struct {
	due time.Time
	raw bool
	msg []byte
}

// pacer sends a session's messages, each latency after it was pushed, in
// order, on its own goroutine; the session function owns it and stops it
// before it returns.
type pacer struct {
	c       *wsmock.Conn
	latency time.Duration

	mu    sync.Mutex
	queue []paced
	shut  bool
	wake  chan struct{} // one slot: something was pushed, or stop
	done  chan struct{}
	once  sync.Once
}

// startPacer starts the sender goroutine of c.
func startPacer(c *wsmock.Conn, latency time.Duration) *pacer {
	p := &pacer{c: c, latency: latency, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go p.run()
	return p
}

// push queues msg to go out latency from now.
func (p *pacer) push(raw bool, msg []byte) {
	p.mu.Lock()
	p.queue = append(p.queue, paced{due: time.Now().Add(p.latency), raw: raw, msg: msg})
	p.mu.Unlock()
	p.poke()
}

func (p *pacer) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// stop lets the queued messages go out at their time (or be dropped once
// the connection is gone) and waits for the sender. Safe to call more than
// once.
func (p *pacer) stop() {
	p.once.Do(func() {
		p.mu.Lock()
		p.shut = true
		p.mu.Unlock()
		p.poke()
	})
	<-p.done
}

// run is the sender: it waits for each message's time, then sends it. A
// failed send (the connection dropped by a fault, or gone) drops the rest.
func (p *pacer) run() {
	defer close(p.done)
	for {
		p.mu.Lock()
		if len(p.queue) == 0 {
			shut := p.shut
			p.mu.Unlock()
			if shut {
				return
			}
			select {
			case <-p.wake:
			case <-p.c.Gone():
				return
			}
			continue
		}
		m := p.queue[0]
		p.queue = p.queue[1:]
		p.mu.Unlock()
		if !p.wait(m.due) {
			return
		}
		var err error
		if m.raw {
			err = p.c.SendRaw(false, m.msg)
		} else {
			err = p.c.Send(m.msg)
		}
		if err != nil {
			return
		}
	}
}

// wait sleeps until due; false when the connection ended first.
func (p *pacer) wait(due time.Time) bool {
	d := time.Until(due)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.c.Gone():
		return false
	}
}
