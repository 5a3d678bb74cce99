package sip

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/sip/bridge"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
)

// The bridged transfer, for trunks that refuse REFER (TrunkConfig.Transfer
// "bridge"; a call that came in follows Config.TransferTrunk's): a second
// leg is dialled through the trunk (dialLeg: no admission slot, never
// given to OnCall), offered the first leg's codec only, so the relay
// (sip/bridge) never transcodes. Answered, the two legs' media are relayed
// to each other and the agent lets go of its leg: ReadFrame ends, the
// engine's audio waits, Hangup and Close leave the call to the bridge. From
// then the bridge owns both legs: when either ends (a BYE, the media
// timeout, the session timer) or the server closes, it hangs up the other
// and closes both.

// errBridged ends the agent's ReadFrame on a call a bridge took over.
var errBridged = fmt.Errorf("%w: the call went on in a bridged transfer", conn.ErrClosed)

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

// bridgeTo is Transfer in bridge mode: target (a number, as Dial takes)
// is dialled through trunk and, once it answered, bridged to c. A failed
// dial or a leg that cannot be bridged returns an error wrapping
// conn.ErrTransferFailed in fixed words (dialWords), counted
// bridge_failures, and c goes on with its agent as it was; ctx's end
// returns ctx's error.
func (c *Call) bridgeTo(ctx context.Context, trunk, target string) error {
	s := c.srv
	fail := func(words string) error {
		s.count("bridge_failures")
		err := fmt.Errorf("%w: %s", conn.ErrTransferFailed, words)
		s.log.Info().Err(err).Str("call_id", c.id).Msg("bridged transfer failed")
		return err
	}
	codec, ok := c.codec()
	if !ok {
		return fail("the call's media is not up")
	}
	leg, err := s.dialLeg(ctx, DialRequest{Trunk: trunk, To: target, codecs: []sdp.Codec{codec}})
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			s.count("bridge_failures")
			return ctxErr
		}
		return fail(dialWords(err))
	}
	drop := func(words string) error {
		leg.Hangup(conn.EndNormal, "not bridged")
		_ = leg.Close()
		return fail(words)
	}
	br, err := bridge.New(c.sess, leg.sess, bridge.Config{})
	switch {
	case errors.Is(err, bridge.ErrCodecMismatch):
		return drop("the target answered with another codec")
	case err != nil:
		return drop("the legs cannot be bridged")
	}
	select {
	case <-c.sess.Done():
		return drop("the caller hung up")
	default:
	}
	b := &bridged{a: c, b: leg, relay: br, stop: make(chan struct{})}
	c.bridged.Store(true)
	leg.bridged.Store(true)
	if err := br.Start(); err != nil {
		c.bridged.Store(false)
		leg.bridged.Store(false)
		return drop("the legs cannot be bridged")
	}
	if !s.bridges.start(b) {
		b.end()
		return fail("the server is closing")
	}
	s.count("bridges")
	s.log.Info().Str("call_id", c.id).Str("leg_id", leg.id).Msg("bridged transfer: the call is relayed to a second leg")
	return nil
}

// codec is the audio codec the call negotiated; ok is false before its
// media started.
func (c *Call) codec() (sdp.Codec, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.negotiate.Codec, c.started
}

// endBridged ends a call its bridge let go of: a BYE if its dialog is
// still up, then what Close does for a call never bridged.
func (c *Call) endBridged() {
	c.bridged.Store(false)
	c.Hangup(conn.EndNormal, "the bridge ended")
	_ = c.Close()
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

var (
	_ bridgeEnd   = (*Call)(nil)
	_ bridgeRelay = (*bridge.Bridge)(nil)
)

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
