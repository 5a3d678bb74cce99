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

// op is text work queued while the session connects.
type op struct {
	epoch messages.Epoch
	text  string
	flush bool
	final bool
}

// epochOut is the state of the epoch being synthesized.
type epochOut struct {
	epoch     messages.Epoch
	id        string
	opened    bool // text was pushed
	final     bool // the final flush was asked
	firstOut  bool
	ended     bool
	cancelled bool
}

// Actor speaks the bot's text.
type Actor struct {
	provider providers.TTS
	peers    kit.Peers
	stats    kit.Counters
	closed   *atomic.Uint64

	link *kit.Link[providers.TTSSession, providers.TTSEvent]
	sess providers.TTSSession // the open session, nil while connecting

	queue    []op
	minEpoch messages.Epoch
	cur      *epochOut
	byID     map[string]messages.Epoch
}

// Props makes the tts actor's props.
func Props(p providers.TTS, peers kit.Peers, opts ...actor.PropsOption) *actor.Props {
	gens := new(atomic.Int64)
	// closed is the newest epoch closed by a failure: a restarted actor
	// must not speak the rest of it (the pacer already settled it).
	closed := new(atomic.Uint64)
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{provider: p, peers: peers, stats: stats, link: kit.NewLink[providers.TTSSession](gens), closed: closed, byID: map[string]messages.Epoch{}}
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.TextDelta:
		a.do(ctx, op{epoch: m.Epoch, text: m.Text})
	case *messages.TextFlush:
		a.do(ctx, op{epoch: m.Epoch, flush: true, final: m.Final})
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
		a.shutdown()
	case *actor.Stopping:
		a.shutdown()
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
		}
		a.cur = &epochOut{epoch: o.epoch, id: "e" + strconv.FormatUint(uint64(o.epoch), 10)}
		a.byID[a.cur.id] = o.epoch
	}
	e := a.cur
	if e.ended || e.final {
		a.stats.Inc("text_after_end")
		return
	}
	if o.text != "" {
		e.opened = true
		a.must(a.sess.Push(e.id, o.text))
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
			a.must(a.sess.Push(e.id, " "))
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
		if a.cur.opened && a.sess != nil {
			a.must(a.sess.Cancel(a.cur.id))
			a.cur.cancelled = true
		}
		a.cur.ended = true // the pacer cleared it; no TTSEnded needed
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
	switch ev.Kind {
	case providers.TTSAudio:
		if !a.cur.firstOut {
			a.cur.firstOut = true
			a.peers.Mark(ctx, epoch, messages.MarkTTSFirstAudio, time.Now())
		}
		a.stats.Inc("audio_chunks")
		ctx.Send(a.peers.Pacer, &messages.TTSAudio{Epoch: epoch, Rate: ev.Rate, PCM: ev.PCM})
	case providers.TTSWord:
		a.stats.Inc("words")
		ctx.Send(a.peers.Pacer, &messages.TTSWord{Epoch: epoch, Text: strings.TrimSpace(ev.Word), Offset: ev.Offset})
	case providers.TTSFlushed:
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
	if err != nil {
		a.closed.Store(uint64(a.cur.epoch))
	}
	delete(a.byID, a.cur.id)
	ctx.Send(a.peers.Pacer, &messages.TTSEnded{Epoch: a.cur.epoch, Err: err})
}

// failAll closes every epoch this incarnation holds (the current one and
// any queued while connecting) towards the pacer, since a restarted actor
// starts with nothing.
func (a *Actor) failAll(ctx actor.Context) {
	err := errors.New("tts restarted")
	a.endEpoch(ctx, err)
	for _, o := range a.queue {
		if a.cur == nil || o.epoch > a.cur.epoch {
			a.cur = &epochOut{epoch: o.epoch, id: "e" + strconv.FormatUint(uint64(o.epoch), 10)}
			a.endEpoch(ctx, err)
		}
	}
	a.queue = nil
}

func (a *Actor) shutdown() {
	a.link.Shutdown()
	a.sess = nil
}
