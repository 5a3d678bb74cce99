package vad

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
)

// Detector is the voice-activity model the actor runs per frame.
type Detector interface {
	Process(pcm []int16, start time.Time, dur time.Duration) (media.VADEvent, time.Time)
	Speaking() bool
}

var _ Detector = (*media.EnergyVAD)(nil)

// Actor runs a Detector over the caller's frames.
type Actor struct {
	det   Detector
	peers kit.Peers
	stats kit.Counters
}

// Props makes the vad actor's props; newDetector is called for every
// incarnation, so a restart starts from silence.
func Props(newDetector func() Detector, peers kit.Peers, opts ...actor.PropsOption) *actor.Props {
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	return actor.PropsFromProducer(func() actor.Actor {
		return &Actor{det: newDetector(), peers: peers, stats: stats}
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.AudioFrame:
		a.frame(ctx, m)
	case *messages.Describe:
		state := "silence"
		if a.det.Speaking() {
			state = "speech"
		}
		d := kit.Describe(string(messages.StageVAD), state, a.stats)
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
	default:
		a.stats.Inc("unknown_messages")
	}
}

// frame analyses one frame and hands it to stt. The frame goes on before
// a stop mark, so the finalize that the stop triggers covers all the audio.
func (a *Actor) frame(ctx actor.Context, f *messages.AudioFrame) {
	ev, at := a.det.Process(f.PCM, f.Start, messages.FrameDuration)
	detected := f.Start.Add(messages.FrameDuration)
	ctx.Send(a.peers.STT, f) // f belongs to stt from here on
	switch ev {
	case media.VADStart:
		a.stats.Inc("starts")
		m := &messages.SpeechStarted{At: at, DetectedAt: detected}
		ctx.Send(a.peers.Turn, m)
	case media.VADStop:
		a.stats.Inc("stops")
		m := &messages.SpeechStopped{At: at, DetectedAt: detected}
		ctx.Send(a.peers.Turn, m)
		ctx.Send(a.peers.STT, m)
	}
}
