package rtp

import (
	"context"
	"fmt"
	"time"

	"github.com/brisvox/brisvox/sip/dtmf"
)

// dtmfSend is a SendDTMF under way: the media clock plays gen's steps in
// place of audio and closes done after the last.
type dtmfSend struct {
	gen  *dtmf.Generator
	done chan struct{}
}

// CanSendEvents reports whether the negotiated parameters carry
// telephone-events (the peer offered telephone-event), so SendDTMF can work.
func (s *Session) CanSendEvents() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started && !s.ended() && s.params.Events
}

// SendDTMF sends digits as RFC 4733 telephone-events at the negotiated
// event payload type, on the audio's RTP clock (telephone-event/8000 with
// G.711 and G.722, /48000 with Opus, as the offer pairs them): the media
// clock sends the events' packets in place of audio (the audio queued
// meanwhile waits; sequence numbers and the stream's timestamp run on),
// the gaps between digits carry audio. It returns when the last digit's
// end packets went out, or when ctx ends (the digit under way still gets
// its three end packets first; ctx's error is returned), or the session
// ends. Errors: ErrNoTelephoneEvent when the peer did not offer
// telephone-event, ErrState before Start, on hold (nothing could be
// heard) or while another SendDTMF runs, dtmf.ErrInvalidDigits and
// dtmf.ErrInvalidConfig for bad digits or timing. The digits are never
// logged nor quoted in an error.
func (s *Session) SendDTMF(ctx context.Context, digits string, cfg dtmf.SendConfig) error {
	s.mu.Lock()
	p, started := s.params, s.started
	s.mu.Unlock()
	switch {
	case s.ended():
		return s.closedErr()
	case !started:
		return fmt.Errorf("%w: send dtmf before start", ErrState)
	case !p.Events:
		return fmt.Errorf("%w: the peer offered no telephone-event", ErrNoTelephoneEvent)
	case !p.sendAllowed():
		return fmt.Errorf("%w: send dtmf on hold", ErrState)
	}
	gen, err := dtmf.NewGenerator(digits, cfg, p.PtimeOut, p.ClockRate)
	if err != nil {
		return err
	}
	d := &dtmfSend{gen: gen, done: make(chan struct{})}
	o := &s.out
	o.cmu.Lock()
	if o.dtmf != nil {
		o.cmu.Unlock()
		return fmt.Errorf("%w: another dtmf send is under way", ErrState)
	}
	o.dtmf = d
	o.cmu.Unlock()
	select {
	case <-d.done:
		return nil
	case <-s.done:
		return s.closedErr()
	case <-ctx.Done():
	}
	o.cmu.Lock()
	d.gen.Stop()
	o.cmu.Unlock()
	select {
	case <-d.done:
	case <-s.done:
	}
	return ctx.Err()
}

// dtmfTick plays one packet time of a send under way, with o.cmu held;
// true when it sent (or held back on hold) an event packet in place of
// audio.
func (s *Session) dtmfTick(now time.Time) bool {
	o := &s.out
	d := o.dtmf
	if d == nil {
		return false
	}
	st := d.gen.Next()
	switch st.Kind {
	case dtmf.StepDone:
		o.dtmf = nil
		close(d.done)
		s.stats.inc(cDTMFSends)
		return false
	case dtmf.StepGap:
		return false
	}
	if st.Start {
		o.eventTS = o.ts
		s.stats.inc(cDigitsSent)
	}
	if o.send {
		n := copy(o.packet[12:], st.Payload[:])
		if s.writePacket(o.eventPT, st.Start, o.eventTS, n, now) {
			s.stats.inc(cEventsSent)
		}
	} else {
		s.stats.inc(cHoldFrames)
	}
	o.ts += o.tsStep
	return true
}
