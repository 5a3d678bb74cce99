package pacer

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/messages"
)

// ErrInvalidConfig marks a bad Config.
var ErrInvalidConfig = errors.New("pacer: invalid config")

// Config tunes playout.
type Config struct {
	// Rate is the call's output sample rate.
	Rate int
	// LeadMargin is subtracted from the heard position at a cut: audio
	// released to the transport may still sit in buffers downstream (jitter
	// buffer, network), so the last few milliseconds may not have been
	// heard. Default 20 ms; a word that started inside the margin is left
	// out of the context (at most one word fewer than heard, never more).
	LeadMargin time.Duration
	// NoLeadMargin sets the margin to zero (the default is applied to a
	// zero LeadMargin otherwise).
	NoLeadMargin bool
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.Rate < 8000 || c.Rate > 48000 || c.Rate%50 != 0 {
		return fmt.Errorf("%w: rate %d", ErrInvalidConfig, c.Rate)
	}
	if c.LeadMargin < 0 {
		return fmt.Errorf("%w: negative lead margin", ErrInvalidConfig)
	}
	return nil
}

func (c Config) margin() time.Duration {
	if c.NoLeadMargin {
		return 0
	}
	if c.LeadMargin == 0 {
		return messages.FrameDuration
	}
	return c.LeadMargin
}

type tick struct{}

// settled is what was heard of a finished epoch.
type settled struct {
	epoch messages.Epoch
	words int
}

// Actor is the pacer.
type Actor struct {
	cfg    Config
	margin time.Duration
	peers  kit.Peers
	stats  kit.Counters
	pool   *sync.Pool

	epoch messages.Epoch // epoch being played (0: none)
	words []time.Duration
	// wordText and told serve the live events (peers.Events): the words'
	// text, and how many of them were reported as playing.
	wordText []string
	told     int
	queue    []*messages.OutputAudio
	head     int
	fill     *messages.OutputAudio // frame being filled
	filled   int
	queued   time.Duration // audio of the epoch cut into frames so far
	released time.Duration
	lastOut  time.Time
	ended    bool
	endErr   error

	rs *resampling

	playing bool
	armed   bool
	nextAt  time.Time
	timer   *time.Timer
	tickMsg *tick

	*book
}

// book is what the pacer keeps across its restarts: the settled epochs
// and the newest interrupt, so that a restarted pacer answers HeardQuery
// and still refuses stale audio.
type book struct {
	minEpoch messages.Epoch
	// history keeps the last settled epochs for HeardQuery.
	history [8]settled
	hn      int
}

// Props makes the pacer's props. Output frames come from a pool that
// outlives restarts, since frames may be in the transport's hands.
func Props(cfg Config, peers kit.Peers, opts ...actor.PropsOption) *actor.Props {
	bk := &book{}
	pool := &sync.Pool{}
	pool.New = func() any { return messages.NewPooledOutput(cfg.Rate, func(f *messages.OutputAudio) { pool.Put(f) }) }
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	return actor.PropsFromProducer(func() actor.Actor {
		a := &Actor{cfg: cfg, margin: cfg.margin(), peers: peers, stats: stats, tickMsg: &tick{}, pool: pool, book: bk}
		a.queue = make([]*messages.OutputAudio, 0, 64) // grows with the first long answer
		a.words = make([]time.Duration, 0, 64)
		return a
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *tick:
		a.tick(ctx)
	case *messages.TTSAudio:
		a.audio(ctx, m)
	case *messages.TTSWord:
		if a.accept(ctx, m.Epoch) {
			a.words = append(a.words, m.Offset)
			if a.peers.Events {
				a.wordText = append(a.wordText, m.Text)
			}
		}
	case *messages.TTSEnded:
		a.ttsEnded(ctx, m)
	case *messages.Interrupt:
		a.interrupt(ctx, m)
	case *messages.HeardQuery:
		ctx.Send(a.peers.LLM, &messages.Heard{Epoch: m.Epoch, Words: a.heardOf(m.Epoch), Cut: true})
	case *messages.MarkEcho:
		a.stats.Inc("mark_echoes")
	case *messages.Describe:
		state := "idle"
		if a.playing {
			state = "playing"
		}
		d := kit.Describe(string(messages.StagePacer), state, a.stats)
		d.Counters["queued_frames"] = uint64(len(a.queue) - a.head)
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Started:
		self, root, msg := ctx.Self(), ctx.ActorSystem().Root, a.tickMsg
		a.timer = time.AfterFunc(time.Hour, func() { root.Send(self, msg) })
		a.timer.Stop()
	case *actor.Restarting:
		// The queued audio dies with this incarnation: the epoch ends here,
		// cut at what was heard, so the llm and the turn do not wait for it.
		if a.epoch != 0 && !a.epochSettled() {
			a.settle(ctx, max(a.heardNow()-a.margin, 0), true)
		}
		a.timer.Stop()
		a.drop()
	case *actor.Stopping:
		if a.timer != nil {
			a.timer.Stop()
		}
		a.drop()
	case *actor.Stopped:
	default:
		a.stats.Inc("unknown_messages")
	}
}

// accept tells whether output of epoch e may be played, starting a new
// epoch when e is newer than the current one.
func (a *Actor) accept(ctx actor.Context, e messages.Epoch) bool {
	if e < a.minEpoch || e < a.epoch || (e == a.epoch && a.epochSettled()) || a.wasSettled(e) {
		a.stats.Inc("stale_output")
		return false
	}
	if e > a.epoch {
		if a.epoch != 0 && !a.epochSettled() {
			// A new answer before the old one ended: the old one is cut here.
			a.stats.Inc("overlaps")
			a.settle(ctx, a.heardNow(), true)
		}
		a.begin(e)
	}
	return true
}

func (a *Actor) epochSettled() bool { return a.wasSettled(a.epoch) }

func (a *Actor) begin(e messages.Epoch) {
	a.drop()
	a.resetResampler()
	a.epoch = e
	a.words = a.words[:0]
	a.wordText, a.told = a.wordText[:0], 0
	a.queued, a.released = 0, 0
	a.ended, a.endErr = false, nil
}

func (a *Actor) audio(ctx actor.Context, m *messages.TTSAudio) {
	if !a.accept(ctx, m.Epoch) {
		return
	}
	if m.Rate != a.cfg.Rate {
		a.resample(m.PCM, m.Rate)
	} else {
		a.feed(m.PCM)
	}
	if !a.playing {
		a.release(ctx)
	}
}

// feed cuts audio of the current epoch into frames.
func (a *Actor) feed(pcm []int16) {
	for len(pcm) > 0 {
		if a.fill == nil {
			a.fill = a.pool.Get().(*messages.OutputAudio)
			a.filled = 0
		}
		n := copy(a.fill.PCM[a.filled:], pcm)
		a.filled += n
		pcm = pcm[n:]
		if a.filled == len(a.fill.PCM) {
			a.push()
		}
	}
}

// push queues the frame being filled (padded with silence).
func (a *Actor) push() {
	f := a.fill
	clear(f.PCM[a.filled:])
	f.Epoch, f.Offset = a.epoch, a.queued
	a.queued += messages.FrameDuration
	if a.head > 0 && len(a.queue) == cap(a.queue) {
		n := copy(a.queue, a.queue[a.head:])
		clear(a.queue[n:])
		a.queue, a.head = a.queue[:n], 0
	}
	a.queue = append(a.queue, f)
	a.fill = nil
}

// release sends the next frame to the transport and arms the next tick.
func (a *Actor) release(ctx actor.Context) {
	if a.head == len(a.queue) {
		a.playing = false
		if a.ended {
			a.settle(ctx, a.released, a.endErr != nil)
		}
		return
	}
	f := a.queue[a.head]
	a.queue[a.head] = nil
	a.head++
	if a.head == len(a.queue) {
		a.queue, a.head = a.queue[:0], 0
	}
	now := time.Now()
	if !a.playing {
		a.playing = true
		a.nextAt = now
	}
	a.lastOut = now
	a.released += messages.FrameDuration
	a.stats.Inc("frames")
	ctx.Send(a.peers.Transport, f)
	if a.peers.Events {
		a.tellWords(ctx, now)
	}
	a.nextAt = a.nextAt.Add(messages.FrameDuration)
	a.armed = true
	a.timer.Reset(a.nextAt.Sub(now))
}

// tellWords reports the words whose first audio is now out: the page shows
// the answer as it is heard, so a barge-in visibly cuts it.
func (a *Actor) tellWords(ctx actor.Context, now time.Time) {
	for a.told < len(a.wordText) && a.told < len(a.words) && a.words[a.told] < a.released {
		a.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventBotWord, Epoch: a.epoch, Text: a.wordText[a.told], At: now})
		a.told++
	}
}

func (a *Actor) tick(ctx actor.Context) {
	if !a.armed || time.Now().Before(a.nextAt) {
		return
	}
	a.armed = false
	a.release(ctx)
}

func (a *Actor) ttsEnded(ctx actor.Context, m *messages.TTSEnded) {
	if !a.accept(ctx, m.Epoch) {
		return
	}
	a.ended, a.endErr = true, m.Err
	if m.Err != nil {
		a.stats.Inc("tts_failures")
	}
	a.flushResampler()
	if a.fill != nil {
		a.push()
	}
	if !a.playing {
		a.release(ctx)
	}
}

// heardNow is how much of the epoch's audio has started playing: the
// frames released before the last one, plus the part of the last one that
// has played by now.
func (a *Actor) heardNow() time.Duration {
	if a.released == 0 {
		return 0
	}
	inLast := time.Since(a.lastOut)
	if !a.playing || inLast > messages.FrameDuration {
		inLast = messages.FrameDuration
	}
	return a.released - messages.FrameDuration + inLast
}

func (a *Actor) interrupt(ctx actor.Context, m *messages.Interrupt) {
	if m.Epoch <= a.minEpoch {
		return
	}
	a.minEpoch = m.Epoch
	a.stats.Inc("interrupts")
	if a.epoch != 0 && a.epoch < m.Epoch && !a.epochSettled() {
		pos := a.heardNow() - a.margin
		a.settle(ctx, max(pos, 0), true)
	}
	a.drop()
	ctx.Send(a.peers.Transport, &messages.Clear{Epoch: m.Epoch, At: m.At})
}

// settle records what was heard of the current epoch and reports it.
func (a *Actor) settle(ctx actor.Context, pos time.Duration, cut bool) {
	words := 0
	for _, off := range a.words {
		if off < pos {
			words++
		}
	}
	a.history[a.hn%len(a.history)] = settled{epoch: a.epoch, words: words}
	a.hn++
	a.playing, a.armed = false, false
	a.timer.Stop()
	if cut {
		a.stats.Inc("cuts")
	}
	ctx.Send(a.peers.LLM, &messages.Heard{Epoch: a.epoch, Words: words, Position: pos, Cut: cut})
	ctx.Send(a.peers.Turn, &messages.PlayoutDone{Epoch: a.epoch, At: time.Now()})
	a.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventBotDone, Epoch: a.epoch, Cut: cut, At: time.Now()})
	if !cut {
		ctx.Send(a.peers.Transport, &messages.Mark{Epoch: a.epoch, Name: "end-" + strconv.FormatUint(uint64(a.epoch), 10)})
	}
}

func (a *Actor) wasSettled(e messages.Epoch) bool {
	for _, s := range a.history {
		if s.epoch == e && e != 0 {
			return true
		}
	}
	return false
}

// heardOf answers a HeardQuery: the settled count, or nothing for an
// epoch that never played.
func (a *Actor) heardOf(e messages.Epoch) int {
	for _, s := range a.history {
		if s.epoch == e && e != 0 {
			return s.words
		}
	}
	return 0
}

// drop returns queued frames to the pool.
func (a *Actor) drop() {
	for i := a.head; i < len(a.queue); i++ {
		a.queue[i].Release()
		a.queue[i] = nil
	}
	a.queue, a.head = a.queue[:0], 0
	if a.fill != nil {
		a.fill.Release()
		a.fill = nil
	}
}
