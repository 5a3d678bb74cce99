package dtmf

import (
	"fmt"
	"strconv"
	"time"
)

// Defaults and bounds of SendConfig.
const (
	// DefaultToneDuration is how long each sent digit's event lasts.
	DefaultToneDuration = 100 * time.Millisecond
	// DefaultGap is the pause with no event between two sent digits.
	DefaultGap = 70 * time.Millisecond
	// MinToneDuration and MaxToneDuration bound SendConfig.Duration (the
	// duration field is 16 bits: a second at 48 kHz fits).
	MinToneDuration = 40 * time.Millisecond
	MaxToneDuration = time.Second
	// MinGap and MaxGap bound SendConfig.Gap.
	MinGap = 40 * time.Millisecond
	MaxGap = 2 * time.Second
	// MaxSendDigits bounds the digits of one send.
	MaxSendDigits = 64
	// EventVolume is the volume field of the events we send (-10 dBm0,
	// RFC 4733 2.3.4 says DTMF lies in 0 to -36 dBm0).
	EventVolume = 10
	// EndRepeats is how many end packets close each event (RFC 4733
	// 2.5.1.4: the final packet is sent three times).
	EndRepeats = 3
)

// SendConfig is how digits are sent. The zero value means the defaults.
type SendConfig struct {
	// Duration is each digit's event length (default 100 ms), Gap the
	// silence before the next digit (default 70 ms).
	Duration, Gap time.Duration
}

func (c SendConfig) withDefaults() SendConfig {
	if c.Duration == 0 {
		c.Duration = DefaultToneDuration
	}
	if c.Gap == 0 {
		c.Gap = DefaultGap
	}
	return c
}

// Validate checks the settings (after the defaults).
func (c SendConfig) Validate() error {
	c = c.withDefaults()
	if c.Duration < MinToneDuration || c.Duration > MaxToneDuration {
		return fmt.Errorf("%w: tone duration %v (want %v to %v)", ErrInvalidConfig, c.Duration, MinToneDuration, MaxToneDuration)
	}
	if c.Gap < MinGap || c.Gap > MaxGap {
		return fmt.Errorf("%w: gap %v (want %v to %v)", ErrInvalidConfig, c.Gap, MinGap, MaxGap)
	}
	return nil
}

// eventOfKey is the RFC 4733 event code of key (0-9 * # A-D, a-d too).
func eventOfKey(k byte) (int, bool) {
	if k >= 'a' && k <= 'd' {
		k -= 'a' - 'A'
	}
	for i := range len(eventKeys) {
		if eventKeys[i] == k {
			return i, true
		}
	}
	return 0, false
}

// ValidDigits checks digits to send: 1 to MaxSendDigits keys of
// 0-9 * # A-D (a-d too). The error never quotes them.
func ValidDigits(digits string) error {
	if len(digits) == 0 || len(digits) > MaxSendDigits {
		return fmt.Errorf("%w: %d digits (want 1 to %d)", ErrInvalidDigits, len(digits), MaxSendDigits)
	}
	for i := range len(digits) {
		if _, ok := eventOfKey(digits[i]); !ok {
			return fmt.Errorf("%w: character %d is not a key", ErrInvalidDigits, i+1)
		}
	}
	return nil
}

// InfoBody is the SIP INFO that presses digit for dur: Content-Type
// application/dtmf-relay, body "Signal=5\r\nDuration=100\r\n" (milliseconds,
// at least 1). A digit that is not a key gives "" and nil: check it with
// ValidDigits first.
func InfoBody(digit byte, dur time.Duration) (contentType string, body []byte) {
	code, ok := eventOfKey(digit)
	if !ok {
		return "", nil
	}
	ms := max(dur.Milliseconds(), 1)
	body = make([]byte, 0, 32)
	body = append(body, "Signal="...)
	body = append(body, eventKeys[code])
	body = append(body, "\r\nDuration="...)
	body = strconv.AppendInt(body, ms, 10)
	body = append(body, "\r\n"...)
	return TypeDTMFRelay, body
}

// StepKind is what a Generator asks of one packet time.
type StepKind int

// The steps.
const (
	// StepDone: every digit was sent; the sender goes back to audio.
	StepDone StepKind = iota
	// StepEvent: send Step.Payload as a telephone-event packet.
	StepEvent
	// StepGap: no event this packet time (the sender sends its audio).
	StepGap
)

// Step is one packet time of a send.
type Step struct {
	Kind StepKind
	// Payload is the event block (code, E|volume, duration) of a
	// StepEvent.
	Payload [4]byte
	// Start: the first packet of a new event; its RTP timestamp, the
	// stream's at this packet time, is the event's for all its packets.
	// The marker bit goes on it.
	Start bool
	// End: the end bit is set (one of the EndRepeats final packets).
	End bool
}

// Generator is the RFC 4733 event schedule of a string of digits, one
// Step per packet time: for each digit, packets with the same timestamp
// (the event's start, marker on the first), the duration growing by a
// packet time each, up to the tone's duration; the final one with the end
// bit EndRepeats times (same duration); then Gap with no event before the
// next digit. It is plain state, driven by one goroutine (the sender's
// media clock).
type Generator struct {
	digits   string
	step     uint32 // timestamp units per packet
	total    uint32 // timestamp units of a tone
	gapSteps int
	i        int    // the digit being sent
	dur      uint32 // the duration field of the last packet sent
	ends     int    // end packets sent of the current digit
	gap      int    // gap packet times left
	started  bool   // the current digit's first packet went out
	stopped  bool
}

// NewGenerator schedules digits for a stream of packet time ptime at
// clockRate (the telephone-event clock).
func NewGenerator(digits string, cfg SendConfig, ptime time.Duration, clockRate int) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := ValidDigits(digits); err != nil {
		return nil, err
	}
	if ptime <= 0 || ptime > 100*time.Millisecond || clockRate < 1000 || clockRate > MaxClockRate {
		return nil, fmt.Errorf("%w: packet time %v at %d Hz", ErrInvalidConfig, ptime, clockRate)
	}
	cfg = cfg.withDefaults()
	units := func(d time.Duration) uint32 { return uint32(int64(d) * int64(clockRate) / int64(time.Second)) }
	step := units(ptime)
	return &Generator{
		digits:   digits,
		step:     step,
		total:    max(units(cfg.Duration), step),
		gapSteps: int((cfg.Gap + ptime - 1) / ptime),
	}, nil
}

// Stop ends the send early: a digit under way gets its end packets (the
// next steps), then StepDone; in a gap or before the first packet, done
// at once.
func (g *Generator) Stop() { g.stopped = true }

// Next is the next packet time's step.
func (g *Generator) Next() Step {
	for {
		if g.i >= len(g.digits) {
			return Step{Kind: StepDone}
		}
		if g.gap > 0 {
			if g.stopped {
				g.i = len(g.digits)
				continue
			}
			g.gap--
			return Step{Kind: StepGap}
		}
		if !g.started && g.stopped {
			g.i = len(g.digits)
			continue
		}
		code, _ := eventOfKey(g.digits[g.i])
		st := Step{Kind: StepEvent, Start: !g.started}
		g.started = true
		if g.ends == 0 && !g.stopped {
			g.dur = min(g.dur+g.step, g.total)
		}
		if g.dur >= g.total || g.stopped || g.ends > 0 {
			st.End = true
			g.ends++
		}
		st.Payload = [4]byte{byte(code), EventVolume, byte(g.dur >> 8), byte(g.dur)}
		if st.End {
			st.Payload[1] |= 0x80
		}
		if g.ends == EndRepeats {
			g.i++
			g.dur, g.ends, g.started = 0, 0, false
			if g.i < len(g.digits) {
				g.gap = g.gapSteps
			}
		}
		return st
	}
}
