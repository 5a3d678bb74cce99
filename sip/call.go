package sip

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/sip/dtmf"
	"github.com/brisvox/brisvox/sip/rtp"
	"github.com/brisvox/brisvox/sip/sdp"
	"github.com/brisvox/brisvox/sip/signal"
)

// Call is one answered SIP call: its dialog, its SDP session and its RTP
// session. It is a served call's connection (conn.Conn with ID and
// Hangup) and hears the caller's key presses (conn.DTMFReceiver).
//
// Its life: Invite makes it with the RTP session bound (the answer
// carries the port); the ACK hands it to Config.OnCall; the dialog's end
// (a BYE, a CANCEL, the session timer, no ACK) or the media's (the media
// timeout) closes the RTP session, so ReadFrame fails and the call's tree
// ends; the tree's end calls Close, which hangs up (BYE) if the dialog
// still lives and waits for everything the call owns.
type Call struct {
	id     string
	srv    *Server
	dialog *signal.Dialog
	source string // the signalling source, for Describe
	proto  string
	adm    conn.Admission

	// An outbound call (Server.Dial) names its trunk; release gives the
	// trunk's slot back, once, at Close.
	outbound  bool
	trunkName string
	trunkCfg  TrunkConfig
	release   func()
	// earlyMedia starts the media at a 18x with SDP (the trunk and the
	// dial both allow it).
	earlyMedia bool
	// caller and callee are the parties (parties.go); never logged.
	caller, callee string

	sess *rtp.Session
	sdp  *sdp.Session

	// bridged: a bridged transfer owns the call (bridged.go): ReadFrame
	// ends, Hangup and Close leave the dialog and the media to the bridge.
	bridged atomic.Bool

	// mu guards what the dialog's goroutine (media), the RTP reader
	// (onEvent) and the expiry timer share.
	mu        sync.Mutex
	det       *dtmf.Detector
	presses   []messages.DTMF
	expiry    *time.Timer
	started   bool // the RTP session got its parameters
	handed    bool // OnCall had it
	negotiate sdp.Negotiated
	cause     error

	// dmu orders the presses: it is held while one is handed over, so
	// the ones that came before the receiver go first.
	dmu     sync.Mutex
	onDTMF  func(messages.DTMF)
	dtmfSet bool            // a receiver was registered once
	early   []messages.DTMF // presses before the first receiver (bounded)
	dropped atomic.Uint64   // presses with no receiver
	info    atomic.Uint64   // presses by SIP INFO

	closeOnce sync.Once
	stop      chan struct{}
	wg        sync.WaitGroup
}

var (
	_ conn.Conn         = (*Call)(nil)
	_ conn.DTMFReceiver = (*Call)(nil)
	_ conn.Describer    = (*Call)(nil)
)

func newCall(s *Server, inv *signal.Invite) *Call {
	return &Call{
		id: inv.Dialog.ID(), srv: s, dialog: inv.Dialog,
		source: inv.Source.String(), proto: inv.Transport,
		caller: inv.From, callee: inv.To,
		stop: make(chan struct{}),
	}
}

// Trunk is the trunk an outbound call went through; ok is false for a
// call that came in (it keeps the transport's defaults): the trunk filter
// (sip/trunk) admits an inbound call's source by prefix and names no
// trunk, so an inbound call has none.
func (c *Call) Trunk() (name string, cfg TrunkConfig, ok bool) {
	return c.trunkName, c.trunkCfg, c.outbound
}

// Outbound says whether we placed the call (Server.Dial).
func (c *Call) Outbound() bool { return c.outbound }

// Admission is the slot the call was admitted into (conn.Admitted).
func (c *Call) Admission() conn.Admission { return c.adm }

// ID is our call id ("sip-" and 16 hex digits).
func (c *Call) ID() string { return c.id }

// Transport names the call's transport for operators: "sip" for a call
// that came in, "sip-out" for one we placed.
func (c *Call) Transport() string {
	if c.outbound {
		return "sip-out"
	}
	return "sip"
}

// InputRate is the rate the call's stages hear (Config.Rate).
func (c *Call) InputRate() int { return c.sess.InputRate() }

// OutputRate is the rate they speak.
func (c *Call) OutputRate() int { return c.sess.OutputRate() }

// ReadFrame is the caller's next 20 ms; it fails with conn.ErrClosed
// once the dialog or the media ended, wrapping conn.ErrVanished when
// the caller is gone without a BYE: the media timeout (the RTP session
// says so) or the session timer's expiry (RFC 4028: nobody refreshed).
func (c *Call) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	if c.bridged.Load() {
		return errBridged
	}
	err := c.sess.ReadFrame(ctx, f)
	if err == nil || !errors.Is(err, conn.ErrClosed) || errors.Is(err, conn.ErrVanished) {
		return err
	}
	c.mu.Lock()
	cause := c.cause
	c.mu.Unlock()
	return endError(err, cause)
}

// endError is ReadFrame's error once the media ended (err) after the
// dialog ended with cause: a dialog the session timer ended is a caller
// that vanished. Only our sentinel is added: the cause's chain may quote
// what the peer sent.
func endError(err, cause error) error {
	if errors.Is(cause, signal.ErrSessionExpired) {
		return fmt.Errorf("%w: %w: %w", conn.ErrClosed, conn.ErrVanished, signal.ErrSessionExpired)
	}
	return err
}

// WriteFrame queues the bot's audio.
func (c *Call) WriteFrame(f *messages.OutputAudio) error { return c.sess.WriteFrame(f) }

// Clear drops queued audio of older epochs.
func (c *Call) Clear(epoch messages.Epoch) error { return c.sess.Clear(epoch) }

// Mark echoes name once what was queued before it was sent.
func (c *Call) Mark(name string) error { return c.sess.Mark(name) }

// OnMarkEcho registers the echo receiver.
func (c *Call) OnMarkEcho(fn func(name string)) { c.sess.OnMarkEcho(fn) }

// OutputLead is how far ahead of the wire the bot's audio is queued: the
// session sends in real time, so what it holds is at most its talk-spurt
// start (two frames).
func (c *Call) OutputLead() time.Duration { return 2 * messages.FrameDuration }

// maxEarlyPresses bounds the key presses kept for a receiver not
// registered yet.
const maxEarlyPresses = 16

// OnDTMF registers the receiver of the caller's key presses. The first
// receiver gets at once the presses that came before it (a caller may
// press keys as soon as it sent the ACK, before the call's stages are
// up): up to maxEarlyPresses, the rest counted undelivered. nil stops
// the delivery.
func (c *Call) OnDTMF(fn func(messages.DTMF)) {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	c.onDTMF = fn
	if fn == nil {
		return
	}
	c.dtmfSet = true
	for _, p := range c.early {
		fn(p)
	}
	c.early = nil
}

// Hangup ends the call from our side: a BYE (or, before the answer, a
// final response), then the media stops. A call a bridged transfer took
// is left to its bridge.
func (c *Call) Hangup(_ conn.EndKind, reason string) {
	if c.bridged.Load() {
		return // the bridge hangs it up when it ends
	}
	c.dialog.Hangup(fmt.Errorf("%w: %s", ErrHangup, reason))
}

// Close hangs up if the dialog lives, stops the media and waits for what
// the call owns. It is called once the call's tree stopped (or by the
// server when the call could not start); later calls do nothing.
func (c *Call) Close() error {
	if c.bridged.Load() {
		return nil // the bridge hangs it up and closes it when it ends
	}
	c.closeOnce.Do(func() {
		c.adm.Release() // a no-op once the server started the call
		if c.release != nil {
			c.release()
		}
		c.dialog.Hangup(ErrHangup)
		close(c.stop)
		c.mu.Lock()
		if c.expiry != nil {
			c.expiry.Stop()
		}
		c.mu.Unlock()
		// No press is handed over after Close, not even by an expiry
		// callback already running (time.AfterFunc's goroutine is not
		// ours to wait for): it is counted undelivered.
		c.dmu.Lock()
		c.onDTMF, c.dtmfSet, c.early = nil, true, nil
		c.dmu.Unlock()
		_ = c.sess.Close()
		c.wg.Wait()
		c.srv.forget(c)
	})
	return nil
}

// watch ends the dialog when the media ends by itself (the media
// timeout): the BYE carries the cause.
func (c *Call) watch() {
	c.wg.Go(func() {
		select {
		case <-c.sess.Done():
			if err := c.sess.Err(); errors.Is(err, rtp.ErrMediaTimeout) {
				c.srv.count("media_timeouts")
				c.dialog.Hangup(fmt.Errorf("%w: %w", ErrMediaTimeout, err))
			}
		case <-c.stop:
		}
	})
}

// startMedia gives the RTP session the negotiated parameters, the first
// time (Start) or after a new offer/answer (Update).
func (c *Call) startMedia(n sdp.Negotiated) error {
	p := params(n)
	c.mu.Lock()
	defer c.mu.Unlock()
	if n.HasEvents && (c.det == nil || !c.negotiate.HasEvents || c.negotiate.ClockRate != n.ClockRate) {
		det, err := dtmf.New(dtmf.Config{ClockRate: n.ClockRate})
		if err != nil {
			return err
		}
		c.det = det
	}
	c.negotiate = n
	if !c.started {
		if err := c.sess.Start(p); err != nil {
			return err
		}
		c.started = true
		return nil
	}
	return c.sess.Update(p)
}

// params maps an offer/answer's result onto the RTP session's.
func params(n sdp.Negotiated) rtp.Params {
	return rtp.Params{
		Codec: rtp.Codec(n.Codec), PayloadType: n.PayloadType,
		ClockRate: n.ClockRate, SampleRate: n.SampleRate,
		Events: n.HasEvents, EventPayloadType: n.EventPT,
		RemoteRTP: n.Remote, RemoteRTCP: n.RemoteRTCP, RTCPMux: n.RTCPMux,
		PtimeIn: n.PtimeIn, PtimeOut: n.PtimeOut, Direction: n.Direction,
	}
}

// onEvent is the RTP session's telephone-event sink (its reader
// goroutine): the detector makes presses of the packets.
func (c *Call) onEvent(seq uint16, ts uint32, marker bool, payload []byte, at time.Time) {
	c.mu.Lock()
	if c.det == nil {
		c.mu.Unlock()
		return
	}
	var err error
	c.presses, err = c.det.Packet(c.presses[:0], seq, ts, marker, payload, at)
	if err == nil {
		c.armExpiryLocked()
	}
	presses := c.presses
	c.mu.Unlock()
	for _, p := range presses {
		c.deliver(p)
	}
}

// armExpiryLocked schedules the detector's deadline: a press whose end
// packets were all lost is reported after it.
func (c *Call) armExpiryLocked() {
	deadline, ok := c.det.Deadline()
	if !ok {
		return
	}
	d := time.Until(deadline)
	if c.expiry == nil {
		c.expiry = time.AfterFunc(d, c.expire)
		return
	}
	c.expiry.Reset(d)
}

// expire is the expiry timer's callback.
func (c *Call) expire() {
	c.mu.Lock()
	var p messages.DTMF
	ok := false
	select {
	case <-c.stop:
	default:
		if c.det != nil {
			p, ok = c.det.Expire(time.Now())
			c.armExpiryLocked()
		}
	}
	c.mu.Unlock()
	if ok {
		c.deliver(p)
	}
}

// deliver hands a press to the call's receiver, or keeps it for the
// first one.
func (c *Call) deliver(p messages.DTMF) {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	switch {
	case c.onDTMF != nil:
		c.onDTMF(p)
	case !c.dtmfSet && len(c.early) < maxEarlyPresses:
		c.early = append(c.early, p)
	default:
		c.dropped.Add(1)
	}
}

// rtpStats are the call's RTP counters, flat, for the server's totals.
func (c *Call) rtpStats() map[string]uint64 {
	st := c.sess.Stats()
	out := map[string]uint64{
		"accepted": st.PacketsIn, "sent": st.PacketsOut, "cn": st.CN, "events": st.Events,
		"late": st.Jitter.Late, "duplicate": st.Jitter.Duplicates, "lost": st.Jitter.Lost,
	}
	for k, v := range st.Drops {
		out["dropped_"+k] = v
	}
	return out
}

// dtmfStats are the call's key-press counters.
func (c *Call) dtmfStats() map[string]uint64 {
	c.dmu.Lock()
	waiting := uint64(len(c.early)) // never delivered if the call ends now
	c.dmu.Unlock()
	out := map[string]uint64{"rfc4733": 0, "sip_info": c.info.Load(), "undelivered": c.dropped.Load() + waiting}
	c.mu.Lock()
	if c.det != nil {
		out["rfc4733"] = c.det.Stats().Presses
	}
	c.mu.Unlock()
	return out
}

// Describe is the call's SIP state for the operator: the dialog, the
// codec, the latched source and the RTP and RTCP figures. Addresses are
// shown (an operator repairs calls with them); numbers and headers never.
func (c *Call) Describe() (state string, info map[string]string, counters map[string]uint64) {
	d := c.dialog.Describe()
	st := c.sess.Stats()
	info = map[string]string{
		"dialog":    d.State.String(),
		"transport": d.Transport,
		"signalled": c.source,
		"codec":     string(st.Codec) + "/" + strconv.Itoa(int(st.PayloadType)),
		"direction": st.Direction.String(),
		"local_rtp": st.Local.String(),
		"ptime_in":  st.PtimeIn.String(), "ptime_out": st.PtimeOut.String(),
	}
	if st.Latched {
		info["latched"] = st.Source.String()
	} else {
		info["latched"] = "no"
	}
	if d.SessionExpires > 0 {
		info["session_expires"] = d.SessionExpires.String()
		info["refresher"] = d.Refresher
	}
	r := st.RTCP
	info["rtcp_fraction_lost"] = strconv.FormatFloat(r.FractionLost, 'f', 3, 64)
	info["rtcp_cumulative_lost"] = strconv.FormatInt(r.CumulativeLost, 10)
	info["rtcp_jitter"] = r.Jitter.String()
	if r.RemoteReported {
		info["remote_fraction_lost"] = strconv.FormatFloat(r.RemoteFractionLost, 'f', 3, 64)
		info["remote_jitter"] = r.RemoteJitter.String()
		info["rtt"] = r.RTT.String()
	}
	counters = c.rtpStats()
	for k, v := range c.dtmfStats() {
		counters["dtmf_"+k] = v
	}
	return d.State.String(), info, counters
}

// media is the call as the dialog's media side (signal.Media): its
// methods run on the dialog's goroutine, one at a time.
type media Call

var _ signal.Media = (*media)(nil)

// Reoffer takes a re-INVITE's or an UPDATE's offer: hold, resume, a new
// address or codec. nil asks for our offer.
func (m *media) Reoffer(offer []byte) ([]byte, error) {
	c := (*Call)(m)
	if offer == nil {
		return c.sdp.Offer(), nil
	}
	answer, n, err := c.sdp.Answer(offer)
	if err != nil {
		return nil, refuseSDP(c.sdp, err)
	}
	if err := c.startMedia(n); err != nil {
		return nil, &signal.Refusal{Code: 488}
	}
	return answer, nil
}

// Answer takes their answer to our offer (a late offer's ACK, an
// offerless re-INVITE's ACK).
func (m *media) Answer(answer []byte) error {
	c := (*Call)(m)
	n, err := c.sdp.AcceptAnswer(answer)
	if err != nil {
		return err
	}
	return c.startMedia(n)
}

// Info takes a SIP INFO: a key press (application/dtmf-relay or
// application/dtmf) is delivered like an RFC 4733 one.
func (m *media) Info(contentType string, body []byte) int {
	c := (*Call)(m)
	p, err := dtmf.ParseInfo(contentType, body, time.Now())
	switch {
	case errors.Is(err, dtmf.ErrUnsupportedType):
		return 415
	case err != nil:
		return 400
	}
	c.info.Add(1)
	c.deliver(p)
	return 200
}

// Confirmed: the ACK came, the call goes to the server (a late offer's
// media started with the answer in it).
func (m *media) Confirmed() {
	c := (*Call)(m)
	if c.outbound {
		return // Dial hands it to its caller
	}
	c.mu.Lock()
	ok := c.started && !c.handed
	c.handed = ok
	c.mu.Unlock()
	if !ok {
		c.dialog.Hangup(signal.ErrNoAnswerInAck)
		return
	}
	c.srv.cfg.OnCall(c)
}

// Ended: the dialog is over. A call the server has closes its media, so
// its tree ends and Close follows; one it never had is closed here.
func (m *media) Ended(cause error) {
	c := (*Call)(m)
	c.mu.Lock()
	c.cause = cause
	handed := c.handed
	c.mu.Unlock()
	if handed {
		_ = c.sess.Close()
		return
	}
	_ = c.Close()
}
