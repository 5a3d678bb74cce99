package sip

import (
	"errors"
	"sync"

	"github.com/brisvox/brisvox/sip/bridge"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/signal"
)

// The bridged transfer, for trunks that refuse REFER (TrunkConfig.Transfer
// "bridge"; a call that came in follows Config.TransferTrunk's): a second
// leg is dialled through the trunk (dialLeg: no admission slot, never
// given to OnCall), offered the first leg's codec only, so the relay
// (sip/bridge) never transcodes. Answered, the two legs' media are relayed
// to each other and the agent lets go of its leg: ReadFrame ends, the
// engine's audio waits, Close leaves the dialog and the media alone. From
// then the bridge owns both legs: when either ends (a BYE, the media
// timeout, the session timer) or the server closes, it hangs up the other
// and closes both.
//
// Here so far: which trunk decides (transferTrunk), the words of a failed
// second leg (dialWords) and the bridges' lifetime (bridged, bridgeSet).
// Transfer does not dial a second leg yet: that needs a Call that can be
// taken from its agent and a Server that ends its bridges (asked of
// call.go, dial.go and server.go's owner).

// transferTrunk is the trunk whose transfer mode a call follows: its own
// (a call we placed) or Config.TransferTrunk (one that came in); ok is
// false when there is none (REFER).
func (c *Call) transferTrunk() (name string, cfg TrunkConfig, ok bool) {
	if name, cfg, ok := c.Trunk(); ok {
		return name, cfg, true
	}
	name = c.srv.cfg.TransferTrunk
	if name == "" {
		return "", TrunkConfig{}, false
	}
	cfg, ok = c.srv.cfg.Trunks[name]
	return name, cfg, ok
}

// dialWords says why the second leg was not answered, in fixed words the
// model can read out (referWords' for a status code).
func dialWords(err error) string {
	var de *signal.DialError
	switch {
	case errors.As(err, &de) && de.Code > 0:
		return referWords(&signal.ReferError{Code: de.Code})
	case errors.As(err, &de) && de.Outcome == signal.DialNoAnswer:
		return "no answer (ring timeout)"
	case errors.As(err, &de) && de.Outcome == signal.DialAuthFailed:
		return "the trunk refused our credentials"
	case errors.As(err, &de) && de.Outcome == signal.DialTransport:
		return "no response from the trunk"
	case errors.Is(err, signal.ErrBadAnswer):
		return "the target answered with a codec the call cannot use"
	case errors.Is(err, ErrDialLimited):
		return "the trunk's call limit is reached"
	case errors.Is(err, ErrInvalidDial), errors.Is(err, ErrUnknownTrunk):
		return "the target cannot be dialled through the trunk"
	case errors.Is(err, rtp.ErrNoPorts):
		return "no media port free"
	}
	return "the second call failed"
}

// bridgeEnd is one leg as its bridge ends it (*Call): endBridged hangs
// it up (a BYE if its dialog is still up) and closes it. Nothing else
// hangs up a bridged call: the serve layer's Hangup and Close at the end
// of the agent's session leave it alone.
type bridgeEnd interface {
	endBridged()
}

// bridgeRelay is the media relay between the legs (*bridge.Bridge).
type bridgeRelay interface {
	Stop()
	Done() <-chan struct{}
}

var _ bridgeRelay = (*bridge.Bridge)(nil)

// bridged is one bridged transfer in place: the agent's call a and the
// second leg b, their media relayed.
type bridged struct {
	a, b  bridgeEnd
	relay bridgeRelay
	stop  chan struct{} // closed by bridgeSet.close
}

// run waits for either leg's end (the relay ends with either session) or
// the server's Close, then ends both.
func (b *bridged) run() {
	select {
	case <-b.relay.Done():
	case <-b.stop:
	}
	b.end()
}

// end stops the relay, then hangs up and closes both legs.
func (b *bridged) end() {
	b.relay.Stop()
	b.a.endBridged()
	b.b.endBridged()
}

// bridgeSet is the server's bridged transfers: each one's goroutine is
// the set's, and close ends them all and waits.
type bridgeSet struct {
	mu     sync.Mutex
	live   map[*bridged]struct{}
	closed bool
	wg     sync.WaitGroup
}

// start runs b until it ends; false once the set is closed (b not run).
func (s *bridgeSet) start(b *bridged) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if s.live == nil {
		s.live = map[*bridged]struct{}{}
	}
	s.live[b] = struct{}{}
	s.wg.Go(func() {
		b.run()
		s.mu.Lock()
		delete(s.live, b)
		s.mu.Unlock()
	})
	return true
}

// close ends every bridge and waits for them; later starts are refused.
func (s *bridgeSet) close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		for b := range s.live {
			close(b.stop)
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// len is the number of bridges in place (bridges_live).
func (s *bridgeSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}
