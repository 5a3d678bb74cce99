package sim

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
)

// MarkAcks says how the loopback client answers marks.
type MarkAcks int

// The ways of answering marks.
const (
	// MarkAuto echoes every mark after LoopbackConfig.MarkDelay.
	MarkAuto MarkAcks = iota
	// MarkManual echoes only when the test calls EchoMark.
	MarkManual
	// MarkNever drops marks.
	MarkNever
)

// RecordKind tells output records apart.
type RecordKind int

// The kinds of output records.
const (
	RecordAudio RecordKind = iota + 1
	RecordClear
	RecordMark
)

// Record is one thing the client received, in wire order.
type Record struct {
	At     time.Time
	Kind   RecordKind
	Epoch  messages.Epoch
	Offset time.Duration // audio: where the frame starts in its epoch
	Name   string        // mark
}

// LoopbackConfig shapes the simulated client.
type LoopbackConfig struct {
	// Rate is the call's sample rate both ways; default 16000.
	Rate int
	// MarkAcks and MarkDelay: how marks are echoed.
	MarkAcks  MarkAcks
	MarkDelay time.Duration
	// PlayoutDelay is the client's playout buffer (a carrier's): it plays
	// each frame this long after it arrived, and a clear drops what it had
	// not played yet. MarkAuto echoes a mark once the audio before it has
	// played: PlayoutDelay after it arrived, then MarkDelay on the way
	// back. A clear does not stop echoes already due (a carrier may echo
	// the marks it drops, as Twilio does; the engine must not take them
	// for playback). The played-text oracle (Result.PlayedWords) counts a
	// word as heard from when it played.
	PlayoutDelay time.Duration
	// ReadDelay makes the client a slow reader: after each audio frame it
	// waits this long before taking the next one (0: frames arrive when
	// written).
	ReadDelay time.Duration
	// RecordLimit bounds the records kept; default 100000.
	RecordLimit int
}

// Loopback is an in-process call connection: it plays a Scenario as the
// caller's audio in real (or virtual) time and records what the engine
// sends back. It implements conn.Conn.
type Loopback struct {
	cfg   LoopbackConfig
	scen  *Scenario
	start time.Time
	hang  chan struct{}
	once  sync.Once
	timer *time.Timer

	mu       sync.Mutex
	records  []Record
	dropped  int
	onEcho   func(string)
	pending  []string // manual marks not echoed yet
	queue    []Record // slow reader's queue
	wake     chan struct{}
	wg       sync.WaitGroup
	frameIdx atomic.Int64  // written by the engine's reader, read by probes
	echoes   []*time.Timer // delayed mark echoes, stopped at Close
}

var _ conn.Conn = (*Loopback)(nil)

// NewLoopback makes a connection that plays scen from start (frame i is
// delivered at start+(i+1)*20ms, once it was fully "captured"), then
// silence until HangUp.
func NewLoopback(cfg LoopbackConfig, scen *Scenario, start time.Time) *Loopback {
	if cfg.Rate == 0 {
		cfg.Rate = 16000
	}
	if cfg.RecordLimit == 0 {
		cfg.RecordLimit = 100000
	}
	l := &Loopback{cfg: cfg, scen: scen, start: start, hang: make(chan struct{}), wake: make(chan struct{}, 1),
		// Room for a few minutes of records, so recording does not
		// allocate on the per-frame path of a normal call.
		records: make([]Record, 0, min(cfg.RecordLimit, 8192))}
	l.timer = time.NewTimer(time.Hour)
	l.timer.Stop()
	if cfg.ReadDelay > 0 {
		l.wg.Add(1)
		go l.reader()
	}
	return l
}

// InputRate is the caller's rate.
func (l *Loopback) InputRate() int { return l.cfg.Rate }

// OutputRate is the bot's rate.
func (l *Loopback) OutputRate() int { return l.cfg.Rate }

// ReadFrame delivers the next frame of the caller when it is due.
func (l *Loopback) ReadFrame(ctx context.Context, f *messages.AudioFrame) error {
	i := int(l.frameIdx.Load())
	f.Start = l.start.Add(time.Duration(i) * messages.FrameDuration)
	due := f.Start.Add(messages.FrameDuration)
	if d := time.Until(due); d > 0 {
		l.timer.Reset(d)
		select {
		case <-l.timer.C:
		case <-ctx.Done():
			l.timer.Stop()
			return ctx.Err()
		case <-l.hang:
			l.timer.Stop()
			return fmt.Errorf("%w: the caller hung up", conn.ErrClosed)
		}
	}
	select {
	case <-l.hang:
		return fmt.Errorf("%w: the caller hung up", conn.ErrClosed)
	default:
	}
	if i < l.scen.FrameCount() {
		l.scen.FillFrame(i, l.cfg.Rate, f.PCM)
	} else {
		clear(f.PCM)
	}
	f.Seq = uint64(i)
	f.Rate = l.cfg.Rate
	l.frameIdx.Add(1)
	return nil
}

// WriteFrame records a frame of bot audio (at once, or through the slow
// reader).
func (l *Loopback) WriteFrame(f *messages.OutputAudio) error {
	select {
	case <-l.hang:
		return fmt.Errorf("%w: the caller hung up", conn.ErrClosed)
	default:
	}
	r := Record{Kind: RecordAudio, Epoch: f.Epoch, Offset: f.Offset}
	if l.cfg.ReadDelay == 0 {
		l.mu.Lock()
		r.At = time.Now()
		l.addLocked(r)
		l.mu.Unlock()
		return nil
	}
	l.mu.Lock()
	l.queue = append(l.queue, r)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return nil
}

func (l *Loopback) reader() {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		if len(l.queue) == 0 {
			l.mu.Unlock()
			select {
			case <-l.wake:
				continue
			case <-l.hang:
				return
			}
		}
		r := l.queue[0]
		l.queue = l.queue[1:]
		r.At = time.Now()
		l.addLocked(r)
		l.mu.Unlock()
		select {
		case <-time.After(l.cfg.ReadDelay):
		case <-l.hang:
			return
		}
	}
}

func (l *Loopback) addLocked(r Record) {
	if len(l.records) >= l.cfg.RecordLimit {
		l.dropped++
		return
	}
	l.records = append(l.records, r)
}

// Clear drops queued audio of older epochs and records the clear.
func (l *Loopback) Clear(epoch messages.Epoch) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	kept := l.queue[:0]
	for _, r := range l.queue {
		if r.Epoch >= epoch {
			kept = append(kept, r)
		}
	}
	l.queue = kept
	l.addLocked(Record{At: time.Now(), Kind: RecordClear, Epoch: epoch})
	return nil
}

// Mark records a mark and echoes it as configured.
func (l *Loopback) Mark(name string) error {
	l.mu.Lock()
	l.addLocked(Record{At: time.Now(), Kind: RecordMark, Name: name})
	switch l.cfg.MarkAcks {
	case MarkManual:
		l.pending = append(l.pending, name)
		l.mu.Unlock()
	case MarkAuto:
		l.mu.Unlock()
		if d := l.cfg.PlayoutDelay + l.cfg.MarkDelay; d == 0 {
			l.echo(name)
		} else {
			t := time.AfterFunc(d, func() { l.echo(name) })
			l.mu.Lock()
			l.echoes = append(l.echoes, t)
			l.mu.Unlock()
		}
	default:
		l.mu.Unlock()
	}
	return nil
}

// EchoMark answers the oldest manual mark; false when none is pending.
func (l *Loopback) EchoMark() bool {
	l.mu.Lock()
	if len(l.pending) == 0 {
		l.mu.Unlock()
		return false
	}
	name := l.pending[0]
	l.pending = l.pending[1:]
	l.mu.Unlock()
	l.echo(name)
	return true
}

func (l *Loopback) echo(name string) {
	l.mu.Lock()
	fn := l.onEcho
	l.mu.Unlock()
	if fn != nil {
		fn(name)
	}
}

// OnMarkEcho registers the engine's echo handler.
func (l *Loopback) OnMarkEcho(fn func(string)) {
	l.mu.Lock()
	l.onEcho = fn
	l.mu.Unlock()
}

// FramesDelivered counts the caller's frames ReadFrame has delivered. Only
// the engine's reader calls ReadFrame; read this while it is blocked (in a
// bubble, at an instant when no frame is due).
func (l *Loopback) FramesDelivered() int { return int(l.frameIdx.Load()) }

// HangUp ends the call from the caller's side: ReadFrame returns ErrClosed.
func (l *Loopback) HangUp() { l.once.Do(func() { close(l.hang) }) }

// Close hangs up, stops the echoes still due and waits for the slow
// reader.
func (l *Loopback) Close() error {
	l.HangUp()
	l.mu.Lock()
	for _, t := range l.echoes {
		t.Stop()
	}
	l.echoes = nil
	l.mu.Unlock()
	l.wg.Wait()
	return nil
}

// Records returns a copy of what the client received, in wire order, and
// how many records the limit dropped.
func (l *Loopback) Records() ([]Record, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Record(nil), l.records...), l.dropped
}
