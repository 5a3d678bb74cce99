package sim

import (
	"sync"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// Keypad is the simulated caller's keypad. Set a Call's WrapConn to Wrap:
// the engine then gets the loopback connection as a conn.DTMFReceiver,
// and the actions of Press press keys at their offsets, as a SIP call's
// RFC 4733 events would arrive. One Keypad serves one call.
type Keypad struct {
	mu      sync.Mutex
	fn      func(messages.DTMF)
	pressed int
	unheard int
}

// keypadConn is the loopback connection with the keypad's receiver.
type keypadConn struct {
	*Loopback
	pad *Keypad
}

var _ conn.DTMFReceiver = (*keypadConn)(nil)

// OnDTMF registers the engine's receiver (nil unregisters).
func (c *keypadConn) OnDTMF(fn func(messages.DTMF)) {
	c.pad.mu.Lock()
	c.pad.fn = fn
	c.pad.mu.Unlock()
}

// Wrap is a Call.WrapConn: l, hearing key presses.
func (k *Keypad) Wrap(l *Loopback) conn.Conn { return &keypadConn{Loopback: l, pad: k} }

// Press returns the actions that press keys, one key every gap from at
// (offsets from the call's start). A key is handed on as it is, so a test
// may press one that is not a DTMF key.
func (k *Keypad) Press(at, gap time.Duration, keys string) []Action {
	out := make([]Action, 0, len(keys))
	for i := range len(keys) {
		d := keys[i]
		out = append(out, Action{At: at + time.Duration(i)*gap, Do: func(*Handle) { k.press(d) }})
	}
	return out
}

func (k *Keypad) press(d byte) {
	k.mu.Lock()
	fn := k.fn
	k.pressed++
	if fn == nil {
		k.unheard++
	}
	k.mu.Unlock()
	if fn != nil {
		fn(messages.DTMF{Digit: d, Source: messages.DTMFRFC4733, Duration: 100 * time.Millisecond, At: time.Now()})
	}
}

// Pressed counts the keys pressed, and Unheard those pressed while no
// receiver was registered.
func (k *Keypad) Pressed() (pressed, unheard int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pressed, k.unheard
}
