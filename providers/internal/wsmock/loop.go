package wsmock

import (
	"time"
)

// Inbox hands the client's messages of one session over on C, from a
// goroutine of its own, so that the session can wait on them and on a
// timer at once.
type Inbox struct {
	// C delivers the client's messages in order; it is closed when the
	// client has gone and every message read was taken.
	C <-chan Message

	c           *Conn
	sessionDone chan struct{}
	readerDone  chan struct{}
}

// Forward starts the goroutine of an Inbox over c; Close stops it.
func Forward(c *Conn) *Inbox {
	in := make(chan Message)
	i := &Inbox{C: in, c: c, sessionDone: make(chan struct{}), readerDone: make(chan struct{})}
	go func() {
		defer close(i.readerDone)
		defer close(in)
		for {
			m, err := c.Next()
			if err != nil {
				return
			}
			// A message read is handed over even when the client has gone
			// meanwhile (its last message before the close must be
			// recorded); only the session's end stops the hand-over.
			select {
			case in <- m:
			case <-i.sessionDone:
				return
			}
		}
	}()
	return i
}

// Close ends the session: it drops the connection and waits for the
// goroutine to return. Call it once.
func (i *Inbox) Close() {
	close(i.sessionDone)
	i.c.Drop()
	<-i.readerDone
}

// Looper is a mock's side of one websocket, called from Loop's
// goroutine only.
type Looper interface {
	// Handle takes one client message (queueing the answers); false ends
	// the session.
	Handle(m Message) bool
	// Queued tells whether an answer waits to be sent.
	Queued() bool
	// Pace is the wait before the next answer; zero or less sends it at
	// once, after a client message already sent, if any.
	Pace() time.Duration
	// SendNext sends the first queued answer; false ends the session.
	SendNext() bool
}

// Loop runs s over c until the client goes or s ends the session; it
// then drops the connection and returns once its goroutine has.
func Loop(c *Conn, s Looper) {
	in := Forward(c)
	defer in.Close()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		if !s.Queued() {
			m, ok := <-in.C
			if !ok || !s.Handle(m) {
				return
			}
			continue
		}
		pace := s.Pace()
		if pace <= 0 {
			// Unpaced: still take what the client sent first, so a
			// cancel stops what is queued.
			select {
			case m, ok := <-in.C:
				if !ok || !s.Handle(m) {
					return
				}
				continue
			default:
			}
		} else {
			if timer == nil {
				timer = time.NewTimer(pace)
			} else {
				timer.Reset(pace)
			}
			select {
			case m, ok := <-in.C:
				timer.Stop()
				if !ok || !s.Handle(m) {
					return
				}
				continue
			case <-timer.C:
			}
		}
		if !s.SendNext() {
			return
		}
	}
}
