package stt

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
)

// MaxBufferedFrames bounds the audio kept while a session connects: 2 s.
// Older frames are dropped and counted.
const MaxBufferedFrames = 100

// Actor streams the caller's audio to an STT provider.
type Actor struct {
	provider providers.STT
	peers    kit.Peers
	stats    kit.Counters

	link *kit.Link[providers.STTSession, providers.STTEvent]
	sess providers.STTSession // the open session, nil while connecting
	// sent is the audio the open session was sent, for the call record's
	// usage when it ends; vendor and model name the provider there.
	sent          time.Duration
	vendor, model string

	*backlog
}

// backlog is the caller's audio waiting for a session, the VAD's marks
// (speech starts, finalizes) owed meanwhile, each at its place in that
// audio, and whether the caller is speaking. It outlives a restart of the
// actor: a provider that fails while the caller speaks must not cost the
// caller's audio. (Audio already sent to a session that then died is not
// replayed to the next one: that needs a replay buffer of the utterance,
// not built yet.)
type backlog struct {
	buffered []*messages.AudioFrame
	owed     []owedMark
	// speaking: the VAD's last word was a start. A session that connects
	// while the caller speaks (a restart mid utterance) is told so first.
	speaking bool
}

// owedMark is a VAD mark that arrived while no session was open: a speech
// start (else a finalize) before buffered[at].
type owedMark struct {
	at    int
	start bool
}

// Props makes the stt actor's props.
func Props(p providers.STT, peers kit.Peers, opts ...actor.PropsOption) *actor.Props {
	gens := new(atomic.Int64) // generations stay unique across restarts
	bl := &backlog{}
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	vendor, model := providers.NameOf(p)
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{provider: p, peers: peers, stats: stats, link: kit.NewLink[providers.STTSession](gens), backlog: bl, vendor: vendor, model: model}
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.AudioFrame:
		a.audio(m)
	case *messages.SpeechStarted:
		a.speechStarted()
	case *messages.SpeechStopped:
		a.speaking = false
		a.finalize(ctx)
	case *actor.Started:
		a.connect(ctx)
	case *kit.Connected[providers.STTSession]:
		if a.link.Accept(ctx, m) {
			a.onConnected(ctx, m.Sess)
		}
	case *kit.ConnectFailed:
		if a.link.Current(m.Gen) {
			a.stats.Inc("connect_failures")
			panic(fmt.Errorf("stt connect: %w", m.Err))
		}
	case *kit.Event[providers.STTEvent]:
		if a.link.Current(m.Gen) {
			a.onEvent(ctx, m.Ev)
		}
	case *kit.Ended:
		if a.link.Current(m.Gen) && a.sess != nil {
			panic(&providers.Disconnected{Cause: fmt.Errorf("stt session ended")})
		}
	case *messages.Describe:
		state := "connecting"
		if a.sess != nil {
			state = "streaming"
		}
		d := kit.Describe(string(messages.StageSTT), state, a.stats)
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Restarting:
		// The frames not yet sent wait for the next session (the backlog
		// outlives the restart). Finals owed by the dead session will not
		// come, and those not yet asked are not asked: the turn is told not
		// to wait for them, and ends the turn with what it has. A caller
		// still speaking is heard by the next session from its first frame.
		a.link.Shutdown()
		a.sessionEnded(ctx)
		a.owed = a.owed[:0]
		if a.speaking {
			a.owed = append(a.owed, owedMark{at: 0, start: true})
		}
		ctx.Send(a.peers.Turn, &messages.SttFailed{At: time.Now()})
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

// onConnected sends what waited for the session in the order it came:
// buffered frames, and the speech starts and finalizes owed between them.
func (a *Actor) onConnected(ctx actor.Context, sess providers.STTSession) {
	a.sess = sess
	owed := a.owed
	a.owed = a.owed[:0] // the marks are sent below, through a live session
	for i, f := range a.buffered {
		for len(owed) > 0 && owed[0].at == i {
			a.sendMark(ctx, owed[0])
			owed = owed[1:]
		}
		a.send(f)
	}
	for _, m := range owed {
		a.sendMark(ctx, m)
	}
	clear(a.buffered)
	a.buffered = a.buffered[:0]
}

func (a *Actor) sendMark(ctx actor.Context, m owedMark) {
	if m.start {
		a.markSpeech()
		return
	}
	a.finalize(ctx)
}

func (a *Actor) audio(f *messages.AudioFrame) {
	if a.sess == nil {
		if len(a.buffered) == MaxBufferedFrames {
			a.buffered[0].Release()
			copy(a.buffered, a.buffered[1:])
			a.buffered = a.buffered[:len(a.buffered)-1]
			a.stats.Inc("frames_dropped")
			for i := range a.owed {
				a.owed[i].at = max(a.owed[i].at-1, 0)
			}
		}
		a.buffered = append(a.buffered, f)
		return
	}
	a.send(f)
}

func (a *Actor) send(f *messages.AudioFrame) {
	if err := a.sess.SendAudio(f.PCM); err != nil {
		a.stats.Inc("send_errors")
	} else {
		a.stats.Inc("frames")
		if f.Rate > 0 {
			a.sent += time.Duration(len(f.PCM)) * time.Second / time.Duration(f.Rate)
		}
	}
	f.Release()
}

func (a *Actor) finalize(ctx actor.Context) {
	a.stats.Inc("finalizes")
	if a.sess == nil {
		a.owed = append(a.owed, owedMark{at: len(a.buffered)})
		return
	}
	if err := a.sess.Finalize(); err != nil {
		panic(fmt.Errorf("stt finalize: %w", err))
	}
	a.tellSent(ctx)
}

// speechStarted passes the VAD's speech start on to a session that holds
// a scarce recognizer only while the caller speaks (providers.
// SpeechMarker); while connecting it is owed at its place in the audio.
func (a *Actor) speechStarted() {
	a.speaking = true
	a.stats.Inc("speech_starts")
	if a.sess == nil {
		if k := len(a.owed); k == 0 || !a.owed[k-1].start {
			a.owed = append(a.owed, owedMark{at: len(a.buffered), start: true})
		}
		return
	}
	a.markSpeech()
}

// markSpeech tells the open session that speech starts, when it wants to
// know.
func (a *Actor) markSpeech() {
	m, ok := a.sess.(providers.SpeechMarker)
	if !ok {
		return
	}
	if err := m.SpeechStarted(); err != nil {
		panic(fmt.Errorf("stt speech start: %w", err))
	}
}

func (a *Actor) onEvent(ctx actor.Context, ev providers.STTEvent) {
	if ev.Err != nil {
		a.stats.Inc("session_errors")
		panic(ev.Err)
	}
	if ev.Final {
		a.stats.Inc("finals")
	} else {
		a.stats.Inc("interims")
	}
	ctx.Send(a.peers.Turn, &messages.Transcript{
		Text: ev.Text, Final: ev.Final, SpeechFinal: ev.SpeechFinal, FromFinalize: ev.FromFinalize, At: time.Now(),
	})
}

// shutdown ends the session and its goroutines and, the call being over,
// releases the frames that waited for a session.
func (a *Actor) shutdown(ctx actor.Context) {
	a.link.Shutdown()
	a.sessionEnded(ctx)
	for _, f := range a.buffered {
		f.Release()
	}
	a.buffered = nil
}

// The call record's usage of the recognizer: EventUsage {stt, vendor,
// model, Audio}, the audio sent to the open session since the last
// report, told at each finalize (the end of an utterance) and when the
// session ends (a restart after it failed, the actor's stop). Their sum is
// the audio each session was sent. Not one event per session at its end
// only: a stage's events sent while the call's session actor stops are
// lost when its last child's Terminated overtakes them (protoactor
// handles system messages first, and drops user messages once stopped),
// which would lose a whole call's audio; told per utterance, only the
// tail after the caller's last words is at risk. Sent only when the call
// is observed; a session that never connected was sent nothing.
func (a *Actor) tellSent(ctx actor.Context) {
	if a.sent > 0 && a.peers.Events {
		a.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventUsage, At: time.Now(), Usage: &messages.ProviderUsage{
			Kind: messages.UsageSTT, Vendor: a.vendor, Model: a.model, Audio: a.sent}})
	}
	a.sent = 0
}

// sessionEnded tells the open session's last audio and forgets it.
func (a *Actor) sessionEnded(ctx actor.Context) {
	if a.sess != nil {
		a.tellSent(ctx)
	}
	a.sess, a.sent = nil, 0
}
