package turn

import (
	"fmt"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/messages"
)

// DTMFMode says what the caller's key presses do.
type DTMFMode string

// The DTMF modes.
const (
	// DTMFCollect (the default) collects the keys into the caller's turn:
	// "The caller pressed 4 2 #". A key while the bot is busy interrupts it
	// first, as speech does.
	DTMFCollect DTMFMode = "collect"
	// DTMFBarge makes a key only interrupt the bot while it is busy (a
	// "press any key to skip"); the keys never reach the model.
	DTMFBarge DTMFMode = "barge"
	// DTMFIgnore drops every key (counted).
	DTMFIgnore DTMFMode = "ignore"
)

// DTMF defaults and bounds.
const (
	DefaultInterDigitTimeout = 2 * time.Second
	DefaultMaxDigits         = 32
	// MaxInterDigitTimeout and MaxMaxDigits bound the settings: a longer
	// wait is a unit mistake, and the keys of a turn stay small.
	MaxInterDigitTimeout = time.Minute
	MaxMaxDigits         = 256
)

// DTMFConfig says what the caller's key presses (messages.DTMF) do. The
// zero value collects keys with the defaults.
type DTMFConfig struct {
	// Mode is DTMFCollect (""), DTMFBarge or DTMFIgnore.
	Mode DTMFMode
	// InterDigitTimeout ends a collection when no key came for this long
	// (default DefaultInterDigitTimeout, at most MaxInterDigitTimeout).
	InterDigitTimeout time.Duration
	// Terminator, when set (one of the DTMF keys, typically '#'), ends a
	// collection at once. It is part of the turn's text: the model reads
	// what was pressed ("The caller pressed 4 2 #"). 0: no terminator.
	Terminator byte
	// MaxDigits ends a collection at that many keys, the terminator
	// counted (default DefaultMaxDigits, at most MaxMaxDigits). 1 makes
	// every key a turn of its own ("press 1 for sales").
	MaxDigits int
}

// Validate checks the DTMF settings.
func (c DTMFConfig) Validate() error {
	switch c.Mode {
	case "", DTMFCollect, DTMFBarge, DTMFIgnore:
	default:
		return fmt.Errorf("%w: dtmf mode %q (want collect, barge or ignore)", ErrInvalidConfig, c.Mode)
	}
	if c.InterDigitTimeout < 0 || c.InterDigitTimeout > MaxInterDigitTimeout {
		return fmt.Errorf("%w: dtmf inter-digit timeout %v (want 0 for the default, up to %v)", ErrInvalidConfig, c.InterDigitTimeout, MaxInterDigitTimeout)
	}
	if c.Terminator != 0 && !messages.ValidDTMFDigit(c.Terminator) {
		return fmt.Errorf("%w: dtmf terminator %q is not a key (0-9, *, #, A-D)", ErrInvalidConfig, c.Terminator)
	}
	if c.MaxDigits < 0 || c.MaxDigits > MaxMaxDigits {
		return fmt.Errorf("%w: dtmf max digits %d (want 0 for the default, up to %d)", ErrInvalidConfig, c.MaxDigits, MaxMaxDigits)
	}
	return nil
}

// WithDefaults fills the zero fields.
func (c DTMFConfig) WithDefaults() DTMFConfig {
	if c.Mode == "" {
		c.Mode = DTMFCollect
	}
	if c.InterDigitTimeout == 0 {
		c.InterDigitTimeout = DefaultInterDigitTimeout
	}
	if c.MaxDigits == 0 {
		c.MaxDigits = DefaultMaxDigits
	}
	return c
}

// keysDue ends the collection of generation gen: no key came for the
// inter-digit timeout.
type keysDue struct{ gen int }

// keys is the caller's key presses of the turn being heard. The keys may
// be a PIN: Describe shows how many there are, never which.
type keys struct {
	digits []byte // in order, the terminator included
	// open: the collection takes more keys (the inter-digit timer runs);
	// closed with digits: they wait for the caller's speech to end.
	open        bool
	first, last time.Time
	gen         int // numbers the inter-digit timer's arming
}

// pending reports whether the turn being heard has keys.
func (k *keys) pending() bool { return len(k.digits) > 0 }

// text is the keys as the model reads them, one by one: "The caller
// pressed 4 2 #".
func (k *keys) text() string {
	var b strings.Builder
	b.Grow(len("The caller pressed") + 2*len(k.digits))
	b.WriteString("The caller pressed")
	for _, d := range k.digits {
		b.WriteByte(' ')
		b.WriteByte(d)
	}
	return b.String()
}

// reset forgets the keys and makes an armed timer stale.
func (k *keys) reset() {
	k.digits = k.digits[:0]
	k.open = false
	k.first, k.last = time.Time{}, time.Time{}
	k.gen++
}

// key acts on one key press.
func (a *Actor) key(ctx actor.Context, m *messages.DTMF) {
	a.stats.Inc("dtmf")
	switch {
	case !messages.ValidDTMFDigit(m.Digit):
		a.stats.Inc("dtmf_invalid")
		return
	case a.cfg.DTMF.Mode == DTMFIgnore || a.draining:
		// While the call ends a key neither interrupts the closing line
		// nor makes a turn nobody would answer.
		a.stats.Inc("dtmf_ignored")
		return
	}
	if a.busy {
		// A key is deliberate: no barge-in delay guards against it.
		a.stats.Inc("dtmf_interrupts")
		a.interrupt(ctx)
	} else if a.cfg.DTMF.Mode == DTMFBarge {
		a.stats.Inc("dtmf_ignored")
		return
	}
	if a.cfg.DTMF.Mode == DTMFBarge {
		return
	}
	k := &a.keys
	if len(k.digits) >= a.cfg.DTMF.MaxDigits {
		// Only keys held for the caller's speech can be this many.
		a.stats.Inc("dtmf_overflow")
		return
	}
	a.discard(ctx) // the turn's text changed
	at := m.At
	if at.IsZero() {
		at = time.Now()
	}
	if !k.pending() {
		k.first = at
	}
	k.digits = append(k.digits, m.Digit)
	k.last = at
	k.open = true
	if m.Digit == a.cfg.DTMF.Terminator || len(k.digits) >= a.cfg.DTMF.MaxDigits {
		a.closeKeys(ctx)
		return
	}
	k.gen++
	a.after(ctx, timerKeys, a.cfg.DTMF.InterDigitTimeout, &keysDue{gen: k.gen})
}

// closeKeys ends the collection: the turn ends now, unless the caller's
// speech is still being heard, in which case the keys join that turn.
func (a *Actor) closeKeys(ctx actor.Context) {
	a.keys.open = false
	a.keys.gen++ // an armed inter-digit timer is stale
	if a.speaking || a.stopped {
		a.stats.Inc("dtmf_held")
		return
	}
	a.endTurn(ctx)
}

// dropKeys forgets the keys of a turn that will not be answered.
func (a *Actor) dropKeys() {
	a.stats.Add("dtmf_dropped", uint64(len(a.keys.digits)))
	a.keys.reset()
}
