package pacer

import (
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/messages"
)

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
	// ConfirmEvery, for a transport whose mark echoes confirm playback (a
	// carrier's client echoes a mark once the audio before it has played),
	// sends a mark every ConfirmEvery of released audio and bounds the
	// heard position at a cut by the newest confirmation: the confirmed
	// position plus the time since its echo came. Audio the carrier still
	// buffers is then not counted as heard, however deep its buffer. An
	// answer that played to its end settles when the echo of its end mark
	// comes (or at EndEchoTimeout), not when its last frame leaves. A
	// multiple of 20 ms; 0 (the default) trusts the clock and LeadMargin.
	ConfirmEvery time.Duration
	// EndEchoTimeout bounds the wait for the end mark's echo with
	// ConfirmEvery set; the answer is then settled as played to its end
	// and counted "end_echo_timeouts". Default 2 s.
	EndEchoTimeout time.Duration
	// StartLead is audio released at once beyond the first frame when
	// playout starts (or resumes after the queue ran dry), then one frame
	// a frame period, so the transport holds that lead from the start. A
	// transport that starts a talk spurt only once it holds two frames
	// (the SIP and WebRTC outputs' prebuffer, their OutputLead) otherwise
	// waits for the second frame, a frame period, before its first packet.
	// A multiple of 20 ms, at most MaxStartLead; 0 (the default): none.
	StartLead time.Duration
}

// MaxStartLead bounds Config.StartLead.
const MaxStartLead = 100 * time.Millisecond

// DefaultEndEchoTimeout is the default Config.EndEchoTimeout.
const DefaultEndEchoTimeout = 2 * time.Second

// Validate checks the config.
func (c Config) Validate() error {
	if c.Rate < 8000 || c.Rate > 48000 || c.Rate%50 != 0 {
		return fmt.Errorf("%w: rate %d", ErrInvalidConfig, c.Rate)
	}
	if c.LeadMargin < 0 {
		return fmt.Errorf("%w: negative lead margin", ErrInvalidConfig)
	}
	if c.ConfirmEvery < 0 || c.ConfirmEvery%messages.FrameDuration != 0 {
		return fmt.Errorf("%w: confirm every %v: want a multiple of %v", ErrInvalidConfig, c.ConfirmEvery, messages.FrameDuration)
	}
	if c.EndEchoTimeout < 0 {
		return fmt.Errorf("%w: negative end echo timeout", ErrInvalidConfig)
	}
	if c.StartLead < 0 || c.StartLead > MaxStartLead || c.StartLead%messages.FrameDuration != 0 {
		return fmt.Errorf("%w: start lead %v: want a multiple of %v up to %v", ErrInvalidConfig, c.StartLead, messages.FrameDuration, MaxStartLead)
	}
	return nil
}

func (c Config) endEchoTimeout() time.Duration {
	if c.EndEchoTimeout == 0 {
		return DefaultEndEchoTimeout
	}
	return c.EndEchoTimeout
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

// Actor is the pacer.
type Actor struct {
	cfg   Config
	peers kit.Peers
	stats kit.Counters
	pool  *sync.Pool
	// writes notes when the transport wrote each frame (writelog.go),
	// with ConfirmEvery only (nil otherwise).
	writes *writeLog
	// book is the playout book (book.go): the epoch being played, its
	// words and confirmations, and the record of settled epochs.
	book *book

	epoch messages.Epoch // epoch being played (0: none), as in the book
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

	// With Config.ConfirmEvery: whether the epoch's last frame is out and
	// its end mark's echo is awaited until endBy.
	awaitEnd bool
	endBy    time.Time

	rs *resampling

	playing bool
	armed   bool
	nextAt  time.Time
	timer   *time.Timer
	tickMsg *tick
}

var _ actor.Actor = (*Actor)(nil)

// Props makes the pacer's props. Output frames come from a pool that
// outlives restarts, since frames may be in the transport's hands.
func Props(cfg Config, peers kit.Peers, opts ...actor.PropsOption) *actor.Props {
	// The book's record of settled epochs survives restarts, so that a
	// restarted pacer answers HeardQuery and still refuses stale audio.
	rec := &record{}
	pool := &sync.Pool{}
	put := func(f *messages.OutputAudio) { pool.Put(f) }
	// With confirmations a frame's release (the transport wrote it) is
	// noted for the heard position at a cut (writelog.go).
	var writes *writeLog
	if cfg.ConfirmEvery > 0 {
		writes = &writeLog{}
		put = func(f *messages.OutputAudio) {
			writes.note(f, time.Now())
			pool.Put(f)
		}
	}
	pool.New = func() any { return messages.NewPooledOutput(cfg.Rate, put) }
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	return actor.PropsFromProducer(func() actor.Actor {
		a := &Actor{cfg: cfg, peers: peers, stats: stats, tickMsg: &tick{}, pool: pool, writes: writes, book: newBook(rec, cfg.margin(), cfg.ConfirmEvery)}
		a.queue = make([]*messages.OutputAudio, 0, 64) // grows with the first long answer
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
			a.book.word(m.Offset)
			if a.peers.Events {
				a.wordText = append(a.wordText, m.Text)
			}
		}
	case *messages.TTSEnded:
		a.ttsEnded(ctx, m)
	case *messages.Interrupt:
		a.interrupt(ctx, m)
	case *messages.HeardQuery:
		words, _ := a.book.heardOf(m.Epoch)
		ctx.Send(a.peers.LLM, &messages.Heard{Epoch: m.Epoch, Words: words, Cut: true})
	case *messages.MarkEcho:
		a.stats.Inc("mark_echoes")
		a.markEcho(ctx, m)
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
		if a.book.open() {
			a.settle(ctx, a.cutAt(), true)
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
	if a.book.stale(e) {
		a.stats.Inc("stale_output")
		return false
	}
	if e > a.epoch {
		if a.book.open() {
			// A new answer before the old one ended: the old one is cut here.
			a.stats.Inc("overlaps")
			// No clear goes out here: what was released plays on, so no
			// confirmation bounds it.
			a.settle(ctx, a.heardNow(), true)
		}
		a.begin(e)
	}
	return true
}

func (a *Actor) begin(e messages.Epoch) {
	a.drop()
	a.resetResampler()
	a.epoch = e
	a.book.begin(e)
	a.wordText, a.told = a.wordText[:0], 0
	a.queued, a.released = 0, 0
	a.ended, a.endErr = false, nil
	a.awaitEnd = false
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

// release sends the next frame to the transport and arms the next tick;
// when playout starts, StartLead more at once.
func (a *Actor) release(ctx actor.Context) {
	if a.head == len(a.queue) {
		a.playing = false
		if a.ended {
			a.playedOut(ctx)
		}
		return
	}
	now := time.Now()
	start := !a.playing
	if start {
		a.playing = true
		a.nextAt = now
	}
	a.send(ctx, now)
	for lead := a.released + a.cfg.StartLead; start && a.released < lead && a.head < len(a.queue); {
		a.send(ctx, now)
	}
	a.nextAt = a.nextAt.Add(messages.FrameDuration)
	a.armed = true
	a.timer.Reset(a.nextAt.Sub(now))
}

// send sends the frame at the head of the queue to the transport.
func (a *Actor) send(ctx actor.Context, now time.Time) {
	f := a.queue[a.head]
	a.queue[a.head] = nil
	a.head++
	if a.head == len(a.queue) {
		a.queue, a.head = a.queue[:0], 0
	}
	a.lastOut = now
	a.released += messages.FrameDuration
	a.readWrites()
	a.stats.Inc("frames")
	ctx.Send(a.peers.Transport, f)
	if c := a.cfg.ConfirmEvery; c > 0 && a.released%c == 0 {
		ctx.Send(a.peers.Transport, &messages.Mark{Epoch: a.epoch, Name: confirmName(a.epoch, a.released)})
	}
	if a.peers.Events {
		a.tellWords(ctx, now)
	}
}

// tellWords reports the words whose first audio is now out: the page shows
// the answer as it is heard, so a barge-in visibly cuts it.
func (a *Actor) tellWords(ctx actor.Context, now time.Time) {
	words := a.book.words
	for a.told < len(a.wordText) && a.told < len(words) && words[a.told] < a.released {
		a.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventBotWord, Epoch: a.epoch, Text: a.wordText[a.told], At: now})
		a.told++
	}
}

func (a *Actor) tick(ctx actor.Context) {
	if a.awaitEnd && !a.armed {
		if !time.Now().Before(a.endBy) && a.book.open() {
			a.stats.Inc("end_echo_timeouts")
			a.awaitEnd = false
			a.settle(ctx, a.released, a.endErr != nil)
		}
		return
	}
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
	h := a.released - messages.FrameDuration + inLast
	if a.playing {
		// While it plays the transport holds StartLead beyond the frame
		// that is playing.
		h = max(h-a.cfg.StartLead, 0)
	}
	return h
}

func (a *Actor) interrupt(ctx actor.Context, m *messages.Interrupt) {
	if !a.book.interrupt(m.Epoch) {
		return
	}
	a.stats.Inc("interrupts")
	if a.epoch < m.Epoch && a.book.open() {
		// The llm ends this answer and asks what was heard (HeardQuery):
		// the book answers it, so no Heard is pushed here.
		a.settleCut(ctx, a.cutAt())
	}
	a.drop()
	ctx.Send(a.peers.Transport, &messages.Clear{Epoch: m.Epoch, At: m.At})
}

// settle records what was heard of the current epoch, whose end the
// pacer decided (played out, overlapped, restarted), and tells the llm.
func (a *Actor) settle(ctx actor.Context, pos time.Duration, cut bool) {
	words := a.record(ctx, pos, cut)
	ctx.Send(a.peers.LLM, &messages.Heard{Epoch: a.epoch, Words: words, Position: pos, Cut: cut})
}

// settleCut records what was heard of the current epoch at an interrupt.
// The llm decided that end, so it asks (HeardQuery) and the book answers:
// the pacer may never have seen audio of the epoch the llm answers, so
// only the llm's question covers every interrupt.
func (a *Actor) settleCut(ctx actor.Context, pos time.Duration) { a.record(ctx, pos, true) }

// record settles the current epoch in the book, stops its playout and
// tells the turn and the live events.
func (a *Actor) record(ctx actor.Context, pos time.Duration, cut bool) int {
	words := a.book.settle(pos)
	a.playing, a.armed, a.awaitEnd = false, false, false
	a.timer.Stop()
	if cut {
		a.stats.Inc("cuts")
	}
	ctx.Send(a.peers.Turn, &messages.PlayoutDone{Epoch: a.epoch, At: time.Now()})
	a.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventBotDone, Epoch: a.epoch, Cut: cut, At: time.Now()})
	if !cut && a.cfg.ConfirmEvery == 0 {
		ctx.Send(a.peers.Transport, &messages.Mark{Epoch: a.epoch, Name: endName(a.epoch)})
	}
	return words
}

// playedOut ends an epoch whose last frame is out. Trusting the clock it
// is settled now; with confirmations, when the echo of its end mark comes.
func (a *Actor) playedOut(ctx actor.Context) {
	if a.cfg.ConfirmEvery == 0 {
		a.settle(ctx, a.released, a.endErr != nil)
		return
	}
	if a.awaitEnd || !a.book.open() {
		return
	}
	a.awaitEnd = true
	a.endBy = time.Now().Add(a.cfg.endEchoTimeout())
	ctx.Send(a.peers.Transport, &messages.Mark{Epoch: a.epoch, Name: endName(a.epoch)})
	a.timer.Reset(a.cfg.endEchoTimeout())
}

// markEcho feeds a mark echo to the book: a newer confirmed position
// moves it on, the end mark settles an epoch that played out.
func (a *Actor) markEcho(ctx actor.Context, m *messages.MarkEcho) {
	a.readWrites()
	switch a.book.echo(m.Name, m.At) {
	case echoEnd:
		if a.awaitEnd {
			a.awaitEnd = false
			a.timer.Stop()
			a.settle(ctx, a.released, a.endErr != nil)
		}
	case echoConfirmed:
		a.stats.Inc("confirmations")
	case echoStale:
		a.stats.Inc("stale_confirmations")
	case echoIgnored, echoOld:
	}
}

// cutAt is the heard position of a cut now (book.cutPos), with every
// write noted so far.
func (a *Actor) cutAt() time.Duration {
	a.readWrites()
	pos, bounded, stalled := a.book.cutPos(a.heardNow(), time.Now())
	if bounded {
		a.stats.Inc("confirmed_cuts")
	}
	if stalled {
		a.stats.Inc("stalled_cuts")
	}
	return pos
}

// readWrites hands the write log's notes of the current epoch to the
// book.
func (a *Actor) readWrites() {
	if a.writes == nil {
		return
	}
	a.writes.drain(func(w written) {
		if w.epoch == a.epoch {
			a.book.out(w.offset, w.at)
		}
	})
}

// drop returns queued frames to the pool: straight, not by Release,
// since they were never written.
func (a *Actor) drop() {
	for i := a.head; i < len(a.queue); i++ {
		a.pool.Put(a.queue[i])
		a.queue[i] = nil
	}
	a.queue, a.head = a.queue[:0], 0
	if a.fill != nil {
		a.pool.Put(a.fill)
		a.fill = nil
	}
}
