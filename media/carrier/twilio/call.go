package twilio

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// maxGapSamples bounds the silence one timestamp jump may insert: a
// larger jump is taken as a bad timestamp (counted "bad_timestamps") and
// the timeline is re-anchored instead (10 minutes).
const maxGapSamples = 10 * 60 * Rate

// gapTolerance: a chunk that starts less than half a frame after the
// expected sample is on time.
const gapTolerance = Rate / 100

// Call is one Media Stream: a conn.Conn at 8000 Hz both ways.
type Call struct {
	core *wscall.Core
	h    *Handler
	adm  conn.Admission

	started    bool
	streamSID  string
	callSID    string
	accountSID string
	params     map[string]string
	quotedSID  []byte

	// Reader state.
	payload    []byte // decoded mu-law of the current media message
	anchored   bool
	tsOffset   int64  // timestamp samples minus timeline samples
	lastChunk  uint64 // chunk number of the last media message (0: none)
	lastLength int    // its samples

	// mulaw is the encoder's scratch; only the outbox's encode functions
	// touch it, under the outbox's lock.
	mulaw []byte

	onDTMF atomic.Pointer[func(messages.DTMF)]
}

var (
	_ conn.Conn         = (*Call)(nil)
	_ conn.DTMFReceiver = (*Call)(nil)
)

// ID is our id of the call ("tw-" and 16 hex digits): the one to log.
func (c *Call) ID() string { return c.core.ID }

// Transport names the call's transport for operators: "twilio".
func (c *Call) Transport() string { return "twilio" }

// StreamSID is Twilio's id of the stream. Do not log it.
func (c *Call) StreamSID() string { return c.streamSID }

// CallSID is Twilio's id of the phone call. Do not log it: it identifies
// a phone call.
func (c *Call) CallSID() string { return c.callSID }

// AccountSID is the Twilio account's id. Do not log it.
func (c *Call) AccountSID() string { return c.accountSID }

// CustomParameters are the <Parameter>s of the <Stream> (a copy). They may
// hold phone numbers: do not log them.
func (c *Call) CustomParameters() map[string]string { return maps.Clone(c.params) }

// InputRate is 8000.
func (c *Call) InputRate() int { return Rate }

// OutputRate is 8000.
func (c *Call) OutputRate() int { return Rate }

// ReadFrame waits for the next 20 ms of the caller (160 samples). After
// the stream ended it returns the frames still queued, then a wrapped
// conn.ErrClosed with the reason.
func (c *Call) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	return c.core.In.ReadFrame(ctx, f)
}

// WriteFrame queues f as a media message (mu-law, base64). It does not
// block and does not keep f. Audio of an epoch before the last Clear is
// dropped (counted "stale_frames"), which is not an error.
func (c *Call) WriteFrame(f *messages.OutputAudio) error {
	if f.Rate != Rate {
		return fmt.Errorf("%w: %d Hz", ErrRate, f.Rate)
	}
	err := c.core.Out.Audio(websocket.MessageText, f.Epoch, func(dst []byte) []byte {
		if cap(c.mulaw) < len(f.PCM) {
			c.mulaw = make([]byte, len(f.PCM))
		}
		mu := c.mulaw[:len(f.PCM)]
		media.MulawEncode(mu, f.PCM)
		return AppendMedia(dst, c.quotedSID, mu)
	})
	if errors.Is(err, wscall.ErrStale) {
		return nil
	}
	return err
}

// Clear sends a clear message (Twilio drops the audio it buffered) ahead
// of the queued audio of epoch and later, and drops the queued audio of
// the epochs before. Marks sent before it are not echoed to OnMarkEcho
// (see the package doc).
func (c *Call) Clear(epoch messages.Epoch) error {
	c.core.Stats.Inc("clears")
	return c.core.Out.Clear(epoch, func(dst []byte) []byte { return AppendClear(dst, c.quotedSID) })
}

// Mark sends a mark after the audio written so far; Twilio echoes it once
// that audio has played, and the echo goes to the OnMarkEcho callback.
func (c *Call) Mark(name string) error {
	return c.core.Out.Mark(name, func(dst []byte) []byte { return AppendMark(dst, c.quotedSID, name) })
}

// OnMarkEcho registers the receiver of playback confirmations; it must
// only hand the name on. nil unregisters.
func (c *Call) OnMarkEcho(fn func(name string)) { c.core.SetEcho(fn) }

// ConfirmsPlayback is true: Twilio echoes a mark once the audio before it has played
// (echoes of cleared marks are swallowed), so an echo confirms playback.
func (c *Call) ConfirmsPlayback() bool { return true }

var _ conn.PlaybackConfirmer = (*Call)(nil)

// OnDTMF registers the receiver of the caller's key presses, one
// messages.DTMF (Source DTMFCarrier, no Duration: Twilio gives none) per
// dtmf event; it must only hand the press on. A dtmf event whose digit is
// not one DTMF key is counted "dtmf_invalid" and dropped. nil unregisters.
// Digits may be a PIN: do not log them.
func (c *Call) OnDTMF(fn func(messages.DTMF)) {
	if fn == nil {
		c.onDTMF.Store(nil)
		return
	}
	c.onDTMF.Store(&fn)
}

// Hangup closes the websocket with the close code of kind (1000, 1013
// try later, 1011 internal, 1001 going away) and reason (ours, sent to
// Twilio; it must not hold personal data). Twilio then goes on
// with the TwiML after <Connect>, or ends the call. It does not wait: see
// Done.
func (c *Call) Hangup(kind conn.EndKind, reason string) {
	c.core.Hangup(wscall.CloseCode(kind), reason)
}

// Admission is the slot the call was admitted into (conn.Admitted).
func (c *Call) Admission() conn.Admission { return c.adm }

// Close hangs up ("call ended"). It does not wait for the close
// handshake; the handler's goroutine finishes the call.
func (c *Call) Close() error {
	c.Hangup(conn.EndNormal, "call ended")
	return nil
}

// Done is closed when the stream is over and its goroutines have ended.
func (c *Call) Done() <-chan struct{} { return c.core.Done() }

// Err is why the stream ended (a wrapped conn.ErrClosed), nil
// before Done.
func (c *Call) Err() error { return c.core.Err() }

// readLoop reads the stream until it ends; its error is the core's.
func (c *Call) readLoop() error {
	c.core.ArmStart(c.h.cfg.StartTimeout)
	m := &Message{}
	for {
		typ, data, err := c.core.ReadMessage()
		if errors.Is(err, wscall.ErrOversized) {
			if end := c.core.Bad("oversized"); end != nil {
				return end
			}
			continue
		}
		if err != nil {
			return err
		}
		c.core.Touch()
		if typ != websocket.MessageText {
			if end := c.core.Bad("binary_messages"); end != nil {
				return end
			}
			continue
		}
		if err := m.Parse(data); err != nil {
			if end := c.core.Bad("bad_json"); end != nil {
				return end
			}
			continue
		}
		if err := c.handle(m); err != nil {
			return err
		}
	}
}

// handle acts on one parsed message; an error ends the stream.
func (c *Call) handle(m *Message) error {
	st := c.core.Stats
	switch m.Event {
	case EventConnected:
		st.Inc("connected")
	case EventStart:
		if c.started {
			return c.core.Bad("duplicate_starts")
		}
		if !m.ValidFormat() {
			st.Inc("bad_media_format")
			return &wscall.End{Code: websocket.StatusUnsupportedData, Reason: "media format is not audio/x-mulaw 8000 Hz mono"}
		}
		c.start(m)
	case EventMedia:
		if !c.started {
			st.Inc("before_start")
			break
		}
		if len(m.Media.Track) > 0 && string(m.Media.Track) != "inbound" {
			st.Inc("other_tracks")
			break
		}
		mu, err := m.DecodePayload(c.payload)
		if err != nil {
			return c.core.Bad("bad_payload")
		}
		c.payload = mu[:0]
		c.media(m, mu)
	case EventMark:
		st.Inc("mark_messages")
		c.core.Echo(string(m.Mark.Name))
	case EventDTMF:
		key, ok := dtmfKey(m.DTMF.Digit)
		if !ok {
			st.Inc("dtmf_invalid")
			break
		}
		st.Inc("dtmf")
		if fn := c.onDTMF.Load(); fn != nil {
			(*fn)(messages.DTMF{Digit: key, Source: messages.DTMFCarrier, At: time.Now()})
		}
	case EventStop:
		st.Inc("stops")
		c.core.In.Close(fmt.Errorf("%w: Twilio stopped the stream", conn.ErrClosed))
		c.core.Hangup(websocket.StatusNormalClosure, "stream stopped")
	default:
		st.Inc("unknown_events")
	}
	c.core.Good()
	return nil
}

// dtmfKey is the key of a dtmf event's digit, which must be exactly one
// DTMF key (Twilio sends one per event).
func dtmfKey(digit []byte) (byte, bool) {
	if len(digit) != 1 || !messages.ValidDTMFDigit(digit[0]) {
		return 0, false
	}
	return digit[0], true
}

// start takes the stream's ids and hands the call on.
func (c *Call) start(m *Message) {
	c.started = true
	c.streamSID = string(m.Start.StreamSID)
	if c.streamSID == "" {
		c.streamSID = string(m.StreamSID)
	}
	c.callSID = string(m.Start.CallSID)
	c.accountSID = string(m.Start.AccountSID)
	c.params = maps.Clone(m.Start.CustomParameters)
	c.quotedSID = QuoteSID(c.streamSID)
	c.core.Live()
	c.h.stats.Inc("calls")
	c.core.Log.Info().Str("call_id", c.core.ID).Msg("twilio stream started")
	c.h.cfg.OnCall(c)
}

// media puts one chunk of the caller's audio on the timeline, after the
// silence of a gap Twilio's timestamps (or, without them, its chunk
// numbers) show.
func (c *Call) media(m *Message, mu []byte) {
	in := c.core.In
	pos := int64(in.Position())
	switch {
	case m.Media.Timestamp.Set && m.Media.Timestamp.V <= 1<<40:
		ts := int64(m.Media.Timestamp.V) * (Rate / 1000)
		if !c.anchored {
			c.anchored, c.tsOffset = true, ts-pos
			break
		}
		gap := ts - c.tsOffset - pos
		if gap > maxGapSamples {
			c.core.Stats.Inc("bad_timestamps")
			c.tsOffset = ts - pos
		} else if gap > gapTolerance {
			c.core.Stats.Inc("gaps")
			in.Silence(int(gap))
		}
	case m.Media.Chunk.Set && c.lastChunk > 0 && m.Media.Chunk.V > c.lastChunk+1:
		missing := m.Media.Chunk.V - c.lastChunk - 1
		if missing*uint64(c.lastLength) > maxGapSamples {
			c.core.Stats.Inc("bad_timestamps")
			break
		}
		c.core.Stats.Inc("gaps")
		in.Silence(int(missing) * c.lastLength)
	}
	if m.Media.Chunk.Set {
		c.lastChunk = m.Media.Chunk.V
	}
	c.lastLength = len(mu)
	in.PushFunc(len(mu), func(dst []int16, from int) { media.MulawDecode(dst, mu[from:from+len(dst)]) })
}
