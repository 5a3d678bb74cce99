package pcmws

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"time"

	"github.com/brisvox/brisvox/media/carrier/internal/wscall"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/coder/websocket"
)

// Call is one PCM websocket call: a conn.Conn at the rate the URL
// asked for, both ways.
type Call struct {
	core  *wscall.Core
	h     *Handler
	rate  int
	query url.Values
	adm   conn.Admission

	// The error messages' budget (the reader's): tokens, up to
	// errorBurst, one back per errorRefill.
	errTokens float64
	errAt     time.Time
}

// The error messages' rate bound: one per bad message at most, a burst
// of errorBurst, then one per errorRefill; the rest are counted
// "errors_unsent". A client that floods bad messages is not answered
// with a flood (and the run of MaxBadMessages closes the call).
const (
	errorBurst  = 8
	errorRefill = time.Second
)

var _ conn.Conn = (*Call)(nil)

// ID is our id of the call ("pw-" and 16 hex digits): the one to log.
func (c *Call) ID() string { return c.core.ID }

// Transport names the call's transport for operators: "pcm".
func (c *Call) Transport() string { return "pcm" }

// Query is the URL's query (a copy), rate included. The client chose
// it: do not log it.
func (c *Call) Query() url.Values {
	q := make(url.Values, len(c.query))
	for k, v := range c.query {
		q[k] = append([]string(nil), v...)
	}
	return q
}

// InputRate is the call's rate.
func (c *Call) InputRate() int { return c.rate }

// OutputRate is the call's rate.
func (c *Call) OutputRate() int { return c.rate }

// ReadFrame waits for the next 20 ms of the caller. After the call ended
// it returns the frames still queued, then a wrapped conn.ErrClosed
// with the reason.
func (c *Call) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	return c.core.In.ReadFrame(ctx, f)
}

// WriteFrame queues f as one binary message of s16le samples. It does
// not block and does not keep f. Audio of an epoch before the last Clear
// is dropped (counted "stale_frames"), which is not an error.
func (c *Call) WriteFrame(f *messages.OutputAudio) error {
	if f.Rate != c.rate {
		return fmt.Errorf("%w: %d Hz on a %d Hz call", ErrRate, f.Rate, c.rate)
	}
	err := c.core.Out.Audio(websocket.MessageBinary, f.Epoch, func(dst []byte) []byte {
		dst = slices.Grow(dst, 2*len(f.PCM))
		for _, s := range f.PCM {
			dst = binary.LittleEndian.AppendUint16(dst, uint16(s))
		}
		return dst
	})
	if errors.Is(err, wscall.ErrStale) {
		return nil
	}
	return err
}

// Clear sends {"type":"clear"} ahead of the queued audio of epoch and
// later, and drops the queued audio of the epochs before. Marks sent
// before it are never confirmed (see the package doc).
func (c *Call) Clear(epoch messages.Epoch) error {
	c.core.Stats.Inc("clears")
	return c.core.Out.Clear(epoch, AppendClear)
}

// Mark sends {"type":"mark","name":name} after the audio written so far;
// the client's echo goes to the OnMarkEcho callback.
func (c *Call) Mark(name string) error {
	return c.core.Out.Mark(name, func(dst []byte) []byte { return AppendMark(dst, name) })
}

// OnMarkEcho registers the receiver of playback confirmations; it must
// only hand the name on. nil unregisters.
func (c *Call) OnMarkEcho(fn func(name string)) { c.core.SetEcho(fn) }

// ConfirmsPlayback is true: the client must echo a mark once the audio before it has played
// (echoes of cleared marks are swallowed), so an echo confirms playback.
func (c *Call) ConfirmsPlayback() bool { return true }

var _ conn.PlaybackConfirmer = (*Call)(nil)

// Publish sends a live event, {"type":"event","data":v}, after what was
// queued before. It does not block; a full queue is an error.
func (c *Call) Publish(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPublish, err)
	}
	if err := c.core.Out.Text(func(dst []byte) []byte { return AppendEvent(dst, data) }); err != nil {
		return err
	}
	c.core.Stats.Inc("events_out")
	return nil
}

// Hangup closes the websocket with the close code of kind (1000, 1013
// try later, 1011 internal, 1001 going away) and reason (ours, sent to
// the client). It does not wait: see Done.
func (c *Call) Hangup(kind conn.EndKind, reason string) {
	c.core.Hangup(wscall.CloseCode(kind), reason)
}

// Admission is the slot the call was admitted into (conn.Admitted).
func (c *Call) Admission() conn.Admission { return c.adm }

// Close hangs up ("call ended").
func (c *Call) Close() error {
	c.Hangup(conn.EndNormal, "call ended")
	return nil
}

// Done is closed when the call is over and its goroutines have ended.
func (c *Call) Done() <-chan struct{} { return c.core.Done() }

// Err is why the call ended (a wrapped conn.ErrClosed), nil before
// Done.
func (c *Call) Err() error { return c.core.Err() }

// readLoop reads the client's messages until the call ends.
func (c *Call) readLoop() error {
	c.core.Live()
	c.h.stats.Inc("calls")
	c.core.Log.Info().Str("call_id", c.core.ID).Int("rate", c.rate).Msg("pcm websocket call started")
	c.h.cfg.OnCall(c)
	for {
		typ, data, err := c.core.ReadMessage()
		if errors.Is(err, wscall.ErrOversized) {
			if end := c.bad("oversized", errOversized); end != nil {
				return end
			}
			continue
		}
		if err != nil {
			return err
		}
		c.core.Touch()
		if typ == websocket.MessageBinary {
			if len(data)%2 != 0 {
				if end := c.bad("odd_length", errOddLength); end != nil {
					return end
				}
				continue
			}
			c.audio(data)
			c.core.Good()
			continue
		}
		ctl, err := ParseControl(data)
		switch {
		case errors.Is(err, ErrUnknownControl):
			c.core.Stats.Inc("unknown_controls")
			c.reply(err)
		case err != nil:
			if end := c.bad("bad_json", err); end != nil {
				return end
			}
			continue
		case ctl.Type == ControlMark:
			c.core.Stats.Inc("mark_messages")
			c.core.Echo(ctl.Name)
		case ctl.Type == ControlHangup:
			c.core.Stats.Inc("client_hangups")
			c.core.In.Close(fmt.Errorf("%w: the client hung up", conn.ErrClosed))
			c.core.Hangup(websocket.StatusNormalClosure, "client hung up")
		}
		c.core.Good()
	}
}

// bad counts a bad message under counter and tells the client what was
// wrong (rate-bounded); the End of a run too long ends the call.
func (c *Call) bad(counter string, err error) error {
	if end := c.core.Bad(counter); end != nil {
		return end
	}
	c.reply(err)
	return nil
}

// reply sends the client an error message for err, when the budget
// allows.
func (c *Call) reply(err error) {
	now := time.Now()
	if c.errAt.IsZero() {
		c.errTokens = errorBurst
	} else {
		c.errTokens = min(errorBurst, c.errTokens+float64(now.Sub(c.errAt))/float64(errorRefill))
	}
	c.errAt = now
	if c.errTokens < 1 {
		c.core.Stats.Inc("errors_unsent")
		return
	}
	c.errTokens--
	text := problem(err)
	if c.core.Out.Text(func(dst []byte) []byte { return AppendError(dst, text) }) != nil {
		c.core.Stats.Inc("errors_unsent")
		return
	}
	c.core.Stats.Inc("error_replies")
}

// audio puts a message of s16le samples (even length) on the timeline.
func (c *Call) audio(data []byte) {
	c.core.In.PushFunc(len(data)/2, func(dst []int16, from int) {
		b := data[2*from:]
		for i := range dst {
			dst[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
		}
	})
}
