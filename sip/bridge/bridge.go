package bridge

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/brisvox/brisvox/sip/rtp"
)

// Leg is what the bridge needs of an rtp.Session.
type Leg interface {
	SetRelay(fn func(rtp.RelayedPacket))
	SetRelayOutput(on bool)
	Relay(p rtp.RelayedPacket) bool
	Done() <-chan struct{}
	Stats() rtp.Stats
}

var _ Leg = (*rtp.Session)(nil)

// Config is a bridge's settings; none yet (the zero value).
type Config struct{}

// Validate checks the settings.
func (Config) Validate() error { return nil }

// Bridge relays two sessions' media to each other.
type Bridge struct {
	a, b    Leg
	mu      sync.Mutex
	started bool
	stopped bool
	stop    chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup

	aToB, bToA, dropped atomic.Uint64
}

// New makes a bridge between two started sessions of the same codec.
func New(a, b *rtp.Session, cfg Config) (*Bridge, error) {
	if a == nil || b == nil || a == b {
		return nil, fmt.Errorf("%w: two distinct sessions needed", ErrInvalidConfig)
	}
	return newBridge(a, b, cfg)
}

func newBridge(a, b Leg, cfg Config) (*Bridge, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	sa, sb := a.Stats(), b.Stats()
	if sa.Codec == "" || sb.Codec == "" {
		return nil, fmt.Errorf("%w: a session is not started", ErrInvalidConfig)
	}
	if sa.Codec != sb.Codec {
		return nil, fmt.Errorf("%w: %s and %s", ErrCodecMismatch, sa.Codec, sb.Codec)
	}
	return &Bridge{a: a, b: b, stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// Start switches both sessions to the relay: from now on each one's
// inbound packets go out on the other.
func (br *Bridge) Start() error {
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.started || br.stopped {
		return fmt.Errorf("%w: start twice or after stop", ErrState)
	}
	br.started = true
	br.a.SetRelayOutput(true)
	br.b.SetRelayOutput(true)
	br.a.SetRelay(br.toB)
	br.b.SetRelay(br.toA)
	br.wg.Add(1)
	go func() {
		defer br.wg.Done()
		select {
		case <-br.stop:
		case <-br.a.Done():
		case <-br.b.Done():
		}
		br.unhook()
	}()
	return nil
}

func (br *Bridge) toB(p rtp.RelayedPacket) {
	if br.b.Relay(p) {
		br.aToB.Add(1)
	} else {
		br.dropped.Add(1)
	}
}

func (br *Bridge) toA(p rtp.RelayedPacket) {
	if br.a.Relay(p) {
		br.bToA.Add(1)
	} else {
		br.dropped.Add(1)
	}
}

// unhook returns both sessions to their normal mode and ends the bridge.
func (br *Bridge) unhook() {
	br.a.SetRelay(nil)
	br.b.SetRelay(nil)
	br.a.SetRelayOutput(false)
	br.b.SetRelayOutput(false)
	close(br.done)
}

// Stop ends the relay and returns both sessions to their normal mode
// (the engine's audio and input again); it waits for that. Idempotent;
// a bridge never started just ends.
func (br *Bridge) Stop() {
	br.mu.Lock()
	if br.stopped {
		br.mu.Unlock()
		br.wg.Wait()
		return
	}
	br.stopped = true
	started := br.started
	close(br.stop)
	br.mu.Unlock()
	if !started {
		close(br.done)
		return
	}
	br.wg.Wait()
}

// Done closes when the bridge ended (Stop, or either session ended).
func (br *Bridge) Done() <-chan struct{} { return br.done }

// Stats are the bridge's counters: a_to_b and b_to_a the packets
// relayed each way, dropped those the other side could not send.
func (br *Bridge) Stats() map[string]uint64 {
	return map[string]uint64{
		"a_to_b":  br.aToB.Load(),
		"b_to_a":  br.bToA.Load(),
		"dropped": br.dropped.Load(),
	}
}
