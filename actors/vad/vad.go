package vad

import (
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
	"github.com/rs/zerolog"
)

// Detector is the voice-activity model the actor runs per frame.
type Detector interface {
	Process(pcm []int16, start time.Time, dur time.Duration) (media.VADEvent, time.Time)
	Speaking() bool
}

var _ Detector = (*media.EnergyVAD)(nil)

// Actor runs a Detector over the caller's frames, or a speech model on
// an inference pool (model.go), and asks the end-of-turn model at speech
// stops (eot.go).
type Actor struct {
	det   Detector
	model *Model
	win   *window // the model mode's state; nil: the detector runs
	eot   *eotState
	peers kit.Peers
	stats kit.Counters
	log   zerolog.Logger
	// mode is what the stage runs, over its restarts (the record's
	// failovers are switches between incarnations too).
	mode *mode
}

// mode says whether the model mode's stage runs the energy fallback; only
// one incarnation runs at a time, so it needs no lock.
type mode struct{ energy bool }

// Config is what the vad stage runs.
type Config struct {
	// NewDetector makes the frame detector, for every incarnation (a
	// restart starts from silence). Required.
	NewDetector func() Detector
	// Model, when set, scores windows with a speech model; the detector is
	// then only the fallback when the model is unavailable.
	Model *Model
	// TurnModel, when set, is asked at every speech stop whether the turn
	// is complete (turn.Config.EndOfTurn uses the answer).
	TurnModel TurnModel
}

// Props makes the vad actor's props.
func Props(cfg Config, peers kit.Peers, log zerolog.Logger, opts ...actor.PropsOption) *actor.Props {
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	m := &mode{}
	return actor.PropsFromProducer(func() actor.Actor {
		a := &Actor{det: cfg.NewDetector(), model: cfg.Model, peers: peers, stats: stats, log: log, mode: m}
		if cfg.TurnModel != nil {
			a.eot = newEOTState(cfg.TurnModel)
		}
		return a
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.AudioFrame:
		if a.win != nil {
			a.modelFrame(ctx, m)
			return
		}
		a.frame(ctx, m)
	case *scored:
		a.modelScored(ctx, m)
	case *eotDone:
		a.eotAnswered(ctx, m)
	case *messages.Describe:
		state := "silence"
		switch {
		case a.model != nil && a.win == nil:
			state = "energy_fallback"
		case a.win != nil && a.win.gate.Speaking(), a.win == nil && a.det.Speaking():
			state = "speech"
		}
		d := kit.Describe(string(messages.StageVAD), state, a.stats)
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Started:
		if a.model != nil {
			a.startModel(ctx)
		}
	case *actor.Stopping, *actor.Restarting:
		a.stopModel()
		a.eotStop()
	case *actor.Stopped:
	default:
		a.stats.Inc("unknown_messages")
	}
}

// frame analyses one frame and hands it to stt. The frame goes on before
// a stop mark, so the finalize that the stop triggers covers all the audio.
func (a *Actor) frame(ctx actor.Context, f *messages.AudioFrame) {
	ev, at := a.det.Process(f.PCM, f.Start, messages.FrameDuration)
	if a.eot != nil {
		a.eotListen(f.PCM, f.Rate)
	}
	detected := f.Start.Add(messages.FrameDuration)
	ctx.Send(a.peers.STT, f) // f belongs to stt from here on
	a.emit(ctx, ev, at, detected)
}

// emit tells turn and stt what a frame or window changed: stt takes a
// scarce recognizer (a local decoder) at a start and asks for the final
// at a stop, so both hear the VAD's one decision.
func (a *Actor) emit(ctx actor.Context, ev media.VADEvent, at, detected time.Time) {
	switch ev {
	case media.VADStart:
		a.stats.Inc("starts")
		m := &messages.SpeechStarted{At: at, DetectedAt: detected}
		ctx.Send(a.peers.Turn, m)
		ctx.Send(a.peers.STT, m)
	case media.VADStop:
		a.stats.Inc("stops")
		m := &messages.SpeechStopped{At: at, DetectedAt: detected}
		ctx.Send(a.peers.Turn, m)
		ctx.Send(a.peers.STT, m)
		if a.eot != nil {
			a.eotAsk(ctx, at)
		}
	}
}
