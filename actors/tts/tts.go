package tts

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// ErrSessionEnded is the reason of a restart when the provider session
// closed by itself.
var ErrSessionEnded = errors.New("tts: provider session ended")

// op is text work queued while the session connects (or while a filler
// clip waits).
type op struct {
	epoch  messages.Epoch
	text   string
	flush  bool
	final  bool
	filler bool // text is a filler phrase (clips.go)
}

// epochOut is the state of the epoch being synthesized. An epoch's text
// goes to one provider context, its segment, until a filler clip is
// played: the clip closes the segment, and the text after it opens the
// next one (e<epoch>.<n>), so the provider's audio of the text after the
// clip cannot overtake it.
type epochOut struct {
	epoch     messages.Epoch
	id        string // the current segment's context id
	seg       int
	opened    bool // text was pushed to the current segment
	final     bool // the final flush was asked
	firstOut  bool
	ended     bool
	cancelled bool
	// base is where the current segment's audio starts in the epoch's
	// audio, and audio the epoch's audio so far: a word's offset from the
	// provider is within its segment.
	base, audio time.Duration
	// clip waits for the current segment's Flushed; waiting holds the
	// epoch's work that came meanwhile, in order.
	clip    *Clip
	waiting []op
	waitGen int
	// chars and received are the current segment's text sent and audio
	// received, for the call record's usage (counted only when the call is
	// observed).
	chars    int
	received time.Duration
}

func contextID(e messages.Epoch, seg int) string {
	id := "e" + strconv.FormatUint(uint64(e), 10)
	if seg > 0 {
		id += "." + strconv.Itoa(seg)
	}
	return id
}

// Actor speaks the bot's text.
type Actor struct {
	provider providers.TTS
	peers    kit.Peers
	stats    kit.Counters
	closed   *atomic.Uint64
	// vendor and model name the provider in the call record's usage.
	vendor, model string

	link *kit.Link[providers.TTSSession, providers.TTSEvent]
	sess providers.TTSSession // the open session, nil while connecting

	queue    []op
	minEpoch messages.Epoch
	cur      *epochOut
	byID     map[string]messages.Epoch

	clips *ClipStore
	timer *time.Timer // a clip's wait limit

	// handling is the epoch of the text message being handled, set by
	// recordEpoch ahead of any work on it (0 for none).
	handling messages.Epoch
}

// recordEpoch is the stage's own receiver middleware, in front of any
// other (a tap): it records the epoch of the text message (TextDelta,
// TextFlush, Filler) the incarnation is handling before the message goes
// on, and clears it when the message was handled. A panic on the message
// leaves it set, so the restart, which runs on the incarnation that
// failed, fails that epoch too (failAll), though the message never reached
// Receive or had not made its epoch current yet: otherwise the restarted
// stage would speak the rest of the epoch without it, while the llm cuts
// the context by word count from the answer's start.
func recordEpoch(next actor.ReceiverFunc) actor.ReceiverFunc {
	return func(c actor.ReceiverContext, env *actor.MessageEnvelope) {
		var e messages.Epoch
		switch m := env.Message.(type) {
		case *messages.TextDelta:
			e = m.Epoch
		case *messages.TextFlush:
			e = m.Epoch
		case *messages.Filler:
			e = m.Epoch
		}
		a, ok := c.Actor().(*Actor)
		if e == 0 || !ok {
			next(c, env)
			return
		}
		a.handling = e
		next(c, env)
		a.handling = 0
	}
}

// Props makes the tts actor's props. clips (nil for none) holds the
// pre-rendered filler phrases. The stage's own receiver middleware
// (recordEpoch) goes in front of any that opts bring.
func Props(p providers.TTS, peers kit.Peers, clips *ClipStore, opts ...actor.PropsOption) *actor.Props {
	gens := new(atomic.Int64)
	// closed is the newest epoch closed by a failure: a restarted actor
	// must not speak the rest of it (the pacer already settled it).
	closed := new(atomic.Uint64)
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	var buf [4]actor.PropsOption // PropsFromProducer applies them at once
	all := append(append(buf[:0], actor.WithReceiverMiddleware(recordEpoch)), opts...)
	vendor, model := providers.NameOf(p)
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{provider: p, peers: peers, stats: stats, link: kit.NewLink[providers.TTSSession](gens), closed: closed, byID: map[string]messages.Epoch{}, clips: clips, vendor: vendor, model: model}
	}, all...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.TextDelta:
		a.do(ctx, op{epoch: m.Epoch, text: m.Text})
	case *messages.TextFlush:
		a.do(ctx, op{epoch: m.Epoch, flush: true, final: m.Final})
	case *messages.Filler:
		a.do(ctx, op{epoch: m.Epoch, text: m.Text, filler: true})
	case *clipWaitDue:
		a.clipWaitDue(ctx, m)
	case *messages.Interrupt:
		a.interrupt(ctx, m.Epoch)
	case *actor.Started:
		a.connect(ctx)
	case *kit.Connected[providers.TTSSession]:
		if a.link.Accept(ctx, m) {
			a.onConnected(ctx, m.Sess)
		}
	case *kit.ConnectFailed:
		if a.link.Current(m.Gen) {
			a.stats.Inc("connect_failures")
			panic(fmt.Errorf("tts connect: %w", m.Err))
		}
	case *kit.Event[providers.TTSEvent]:
		if a.link.Current(m.Gen) {
			a.onEvent(ctx, m.Ev)
		}
	case *kit.Ended:
		if a.link.Current(m.Gen) && a.sess != nil {
			panic(ErrSessionEnded)
		}
	case *messages.Describe:
		state := "connecting"
		if a.sess != nil {
			state = "ready"
			if a.cur != nil && !a.cur.ended {
				state = "speaking"
			}
		}
		d := kit.Describe(string(messages.StageTTS), state, a.stats)
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Restarting:
		a.failAll(ctx)
		a.shutdown(ctx)
	case *actor.Stopping:
		a.shutdown(ctx)
	case *actor.Stopped:
	default:
		a.stats.Inc("unknown_messages")
	}
}

func (a *Actor) connect(ctx actor.Context) {
	a.stats.Inc("connects")
	a.link.Connect(ctx, a.provider.Connect)
}

// onConnected applies the text work queued while connecting.
func (a *Actor) onConnected(ctx actor.Context, sess providers.TTSSession) {
	a.sess = sess
	q := a.queue
	a.queue = nil
	for _, o := range q {
		a.do(ctx, o)
	}
}

// do applies one piece of text work, or queues it while connecting.
func (a *Actor) do(ctx actor.Context, o op) {
	if o.epoch < a.minEpoch || (a.cur != nil && o.epoch < a.cur.epoch) || uint64(o.epoch) <= a.closed.Load() {
		a.stats.Inc("stale_text")
		return
	}
	if a.sess == nil {
		a.queue = append(a.queue, o)
		return
	}
	if a.cur == nil || a.cur.epoch != o.epoch {
		// Epochs only go forward: a context of an older epoch still open
		// (its answer was settled without an interrupt, e.g. the pacer was
		// restarted) would hold the synthesizer's queue, so it goes now.
		if a.cur != nil && a.cur.opened && !a.cur.ended {
			a.must(a.sess.Cancel(a.cur.id))
			a.cur.cancelled, a.cur.ended = true, true
			a.stats.Inc("superseded")
			a.tellUsage(ctx, a.cur)
		}
		a.dropClip()
		a.cur = &epochOut{epoch: o.epoch, id: contextID(o.epoch, 0)}
		a.byID[a.cur.id] = o.epoch
	}
	e := a.cur
	if e.clip != nil {
		e.waiting = append(e.waiting, o)
		return
	}
	if e.ended || e.final {
		a.stats.Inc("text_after_end")
		return
	}
	if o.filler {
		a.filler(ctx, e, o.text)
		return
	}
	if o.text != "" {
		a.push(e, o.text)
		return
	}
	if !o.flush {
		return
	}
	if !o.final {
		// Mid-answer flush (before a tool runs): end the word in progress
		// so the provider speaks everything it holds; the context stays
		// open for the next round's text.
		if e.opened {
			a.push(e, " ")
		}
		return
	}
	e.final = true
	if !e.opened {
		// Nothing to say: the epoch ends without audio.
		a.endEpoch(ctx, nil)
		return
	}
	a.must(a.sess.Flush(e.id))
}

// must turns a failed provider call into a restart of this actor.
func (a *Actor) must(err error) {
	if err != nil {
		panic(fmt.Errorf("tts: %w", err))
	}
}

func (a *Actor) interrupt(ctx actor.Context, e messages.Epoch) {
	if e <= a.minEpoch {
		return
	}
	a.minEpoch = e
	a.stats.Inc("interrupts")
	kept := a.queue[:0]
	for _, o := range a.queue {
		if o.epoch >= e {
			kept = append(kept, o)
		}
	}
	a.queue = kept
	if a.cur != nil && a.cur.epoch < e && !a.cur.ended {
		a.dropClip()
		if a.cur.opened && a.sess != nil {
			a.must(a.sess.Cancel(a.cur.id))
			a.cur.cancelled = true
		}
		a.cur.ended = true // the pacer cleared it; no TTSEnded needed
		a.tellUsage(ctx, a.cur)
	}
}

func (a *Actor) onEvent(ctx actor.Context, ev providers.TTSEvent) {
	if ev.Kind == providers.TTSError {
		a.stats.Inc("session_errors")
		panic(ev.Err)
	}
	epoch, ok := a.byID[ev.ContextID]
	if !ok || a.cur == nil || epoch != a.cur.epoch || a.cur.ended || epoch < a.minEpoch {
		if ev.Kind == providers.TTSCancelled {
			delete(a.byID, ev.ContextID)
		}
		a.stats.Inc("stale_events")
		return
	}
	if ev.ContextID != a.cur.id {
		// A segment closed for a clip: nothing of it may follow.
		if ev.Kind == providers.TTSCancelled {
			delete(a.byID, ev.ContextID)
		}
		a.stats.Inc("stale_events")
		return
	}
	switch ev.Kind {
	case providers.TTSAudio:
		if a.peers.Events {
			a.cur.received += samplesDuration(len(ev.PCM), ev.Rate)
		}
		a.play(ctx, ev.Rate, ev.PCM)
	case providers.TTSWord:
		a.stats.Inc("words")
		ctx.Send(a.peers.Pacer, &messages.TTSWord{Epoch: epoch, Text: strings.TrimSpace(ev.Word), Offset: a.cur.base + ev.Offset})
	case providers.TTSFlushed:
		if a.cur.clip != nil {
			a.playClip(ctx)
			return
		}
		if a.cur.final {
			a.endEpoch(ctx, nil)
		}
	case providers.TTSCancelled:
		delete(a.byID, ev.ContextID)
	}
}

// endEpoch closes the current epoch towards the pacer.
func (a *Actor) endEpoch(ctx actor.Context, err error) {
	if a.cur == nil || a.cur.ended {
		return
	}
	a.cur.ended = true
	a.dropClip()
	a.tellUsage(ctx, a.cur)
	if err != nil {
		a.closed.Store(uint64(a.cur.epoch))
	}
	delete(a.byID, a.cur.id)
	ctx.Send(a.peers.Pacer, &messages.TTSEnded{Epoch: a.cur.epoch, Err: err})
}

// failAll closes every epoch this incarnation holds (the current one, any
// queued while connecting, and the one of the text message it failed on)
// towards the pacer, since a restarted actor starts with nothing: the
// pacer settles what was heard of each, and the restarted actor speaks
// nothing more of them (closed).
func (a *Actor) failAll(ctx actor.Context) {
	err := errors.New("tts restarted")
	a.endEpoch(ctx, err)
	fail := func(e messages.Epoch) {
		if (a.cur == nil || e > a.cur.epoch) && e >= a.minEpoch && uint64(e) > a.closed.Load() {
			a.cur = &epochOut{epoch: e, id: contextID(e, 0)}
			a.endEpoch(ctx, err)
		}
	}
	for _, o := range a.queue {
		fail(o.epoch)
	}
	a.queue = nil
	// The message that failed came after the queued ones: its epoch is
	// not older than theirs.
	if e := a.handling; e != 0 {
		a.handling = 0
		fail(e)
	}
}

func (a *Actor) shutdown(ctx actor.Context) {
	if a.timer != nil {
		a.timer.Stop()
	}
	if a.cur != nil && !a.cur.ended {
		a.tellUsage(ctx, a.cur) // the context open at the call's end
	}
	a.link.Shutdown()
	a.sess = nil
}
