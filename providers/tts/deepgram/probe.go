package aura

import (
	"context"
	"errors"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// errPingDeadline is the cause of a ping's context that ran out (rather
// than one the session ended because an answer became owed).
var errPingDeadline = errors.New("aura: ping deadline")

// probe is the session's probe goroutine. While the probe is on (text
// unflushed on the server, nothing owed) it pings at once, then again
// ProbeInterval after each pong; a ping unanswered within ReplyTimeout
// ends the session with *providers.Timeout{Op: "ping"}, unless the probe
// was turned off meanwhile (an answer became owed: the reply deadline
// rules). It returns when the session ends.
func (s *session) probe() {
	defer close(s.probeDone)
	closing := s.ws.Closing()
	var pause *time.Timer
	defer func() {
		if pause != nil {
			pause.Stop()
		}
	}()
	for {
		s.mu.Lock()
		if !s.probeOn {
			s.mu.Unlock()
			select {
			case <-s.probeWake:
				continue
			case <-closing:
				return
			}
		}
		s.mu.Unlock()
		// The ping's context ends only by its deadline: one cancelled
		// while the ping is being written would close the connection.
		ctx, cancel := context.WithTimeoutCause(context.Background(), s.cfg.ReplyTimeout, errPingDeadline)

		s.pings.Add(1)
		err := s.ws.Ping(ctx)
		timedOut := errors.Is(context.Cause(ctx), errPingDeadline)
		cancel()
		s.mu.Lock()
		on := s.probeOn
		s.mu.Unlock()
		switch {
		case err == nil:
			s.pongs.Add(1)
		case errors.Is(err, providers.ErrClosed):
			return
		case !on:
			continue // an answer became owed: the reply deadline rules
		case timedOut:
			s.ws.Abort(&providers.Timeout{Op: "ping"})
			return
		default:
			s.ws.Abort(err)
			return
		}
		if pause == nil {
			pause = time.NewTimer(s.cfg.ProbeInterval)
		} else {
			pause.Reset(s.cfg.ProbeInterval)
		}
		select {
		case <-pause.C:
		case <-s.probeWake:
			pause.Stop()
		case <-closing:
			return
		}
	}
}
