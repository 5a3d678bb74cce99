package vad

import (
	"math"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/messages"
)

// The model mode. A speech model (Silero) scores windows of the call's
// audio (512 samples at 16 kHz, 256 at 8 kHz) on an inference pool, off
// the actor's goroutine. The actor never waits for it:
//
//   - every frame goes on to stt at once, whatever the model does;
//   - a full window is submitted when no window of the call is in flight,
//     else it waits (one window at most; an older waiting one is skipped,
//     counted windows_skipped);
//   - the score comes back as a message and feeds the Gate, whose starts
//     and stops go to turn (and stops to stt) with the backdated times;
//   - a window the pool refuses (full queue) or answers with an error
//     (deadline, failure) is counted and skipped: the next window is
//     scored as usual, so the detector recovers within one window;
//   - a window whose level is under Model.Floor is silence without the
//     model (scored 0 at once, counted windows_below_floor): most of a
//     call is the caller listening, and a window that quiet is not
//     speech to any listener, so the pool's CPU goes to the windows that
//     could be. The model's state does not see the skipped windows; after
//     ResetAfterSilence of them it is reset as after any silence.

// Scorer scores windows of one call's audio with a speech model, off the
// caller's goroutine. media/silero's pool implements it through an
// adapter; tests use a deterministic one.
type Scorer interface {
	// WindowSamples is the window length at the call's rate.
	WindowSamples() int
	// Score submits a window (the scorer copies it before returning) and
	// returns at once: an error means the window was refused and done will
	// not be called. Otherwise done is called exactly once, on another
	// goroutine, with the speech probability or why there is none. At most
	// one window of a Scorer is in flight.
	Score(window []int16, done func(p float32, err error)) error
	// Close releases the call's stream; it waits until no done call is
	// running or due, so none comes after it returns.
	Close() error
}

// StateResetter is a Scorer whose model keeps a state over the call
// (Silero's recurrent state), which the actor resets after a long
// silence: carried over many turns, Silero's state made a short word
// ("hello", spoken by flite after a few answered questions) score 0.5-0.8
// instead of 0.98, and the gate miss it; reset after a second of silence,
// every one scored 0.99. Reset fails while a window is in flight.
type StateResetter interface {
	Reset() error
}

// ResetAfterSilence is how long the model's windows must all be silence
// (below SilenceBelow, the gate not speaking) before a StateResetter's
// state is reset, once per such stretch.
const ResetAfterSilence = time.Second

// SilenceBelow is the probability under which a window counts towards
// ResetAfterSilence.
const SilenceBelow = 0.1

// Gate turns window probabilities into speech starts and stops
// (media.SpeechGate).
type Gate interface {
	Process(p float32, start time.Time, dur time.Duration) (media.VADEvent, time.Time)
	Speaking() bool
}

// Model configures the model mode. NewScorer is called for every
// incarnation of the actor (a restart starts a fresh stream); when it
// fails the actor runs the energy detector instead and says so in the log,
// in Describe (state "energy_fallback", counter model_unavailable) and in
// the call record (an EventFailover, switchTo).
type Model struct {
	// Name names the model in the call record's failovers; default
	// DefaultModelName.
	Name      string
	NewScorer func() (Scorer, error)
	NewGate   func() Gate
	// Floor is the RMS level (of full scale 32768) under which a window
	// is silence without the model; 0 scores every window. DefaultFloor
	// is -60 dBFS.
	Floor int
}

// DefaultModelName is the Name of a Model that gives none: Silero, the
// speech model the stage runs (media/silero).
const DefaultModelName = "silero"

// energyName names the energy detector in the call record's failovers.
const energyName = "energy"

// name is the model's name for the record.
func (m *Model) name() string {
	if m.Name == "" {
		return DefaultModelName
	}
	return m.Name
}

// DefaultFloor is the default Model.Floor: an RMS of 33 of 32768, -60
// dBFS, some 30 dB under soft speech on a phone line and inaudible on
// it.
const DefaultFloor = 33

// MaxFloor bounds Model.Floor: -30 dBFS, the level of quiet speech.
const MaxFloor = 1036

// FloorOf is the Model.Floor of a level in dB of full scale, rounded:
// 0 (off) under -90.3 dBFS, MaxFloor above -30.
func FloorOf(dBFS float64) int {
	return min(int(math.Round(32768*math.Pow(10, dBFS/20))), MaxFloor)
}

// scored is the model's answer for the window in flight; the actor keeps
// one and reuses it (one window in flight at a time).
type scored struct {
	p   float32
	err error
}

// window is the model mode's state.
type window struct {
	scorer  Scorer
	gate    Gate
	rate    int
	buf     []int16 // the window being filled
	n       int
	start   time.Time // of buf's first sample
	ready   []int16   // a full window waiting for the one in flight
	readyAt time.Time
	flying  bool
	flyAt   time.Time // start of the window in flight
	answer  *scored
	done    func(p float32, err error)
	// quiet is the silence scored since the last window that was not
	// (see ResetAfterSilence).
	quiet time.Duration
	// floorSq is Model.Floor squared (0: off), compared with a window's
	// mean square.
	floorSq int64
}

func (a *Actor) startModel(ctx actor.Context) {
	s, err := a.model.NewScorer()
	if err != nil {
		a.stats.Inc("model_unavailable")
		a.log.Warn().Err(err).Str("call_id", string(a.peers.Call)).Msg("vad model unavailable; using the energy detector")
		a.switchTo(ctx, true)
		return
	}
	a.switchTo(ctx, false)
	f := int64(min(max(a.model.Floor, 0), MaxFloor))
	w := &window{scorer: s, gate: a.model.NewGate(), answer: &scored{}, floorSq: f * f}
	w.buf = make([]int16, s.WindowSamples())
	w.ready = make([]int16, 0, s.WindowSamples())
	self, root, answer := ctx.Self(), ctx.ActorSystem().Root, w.answer
	w.done = func(p float32, err error) {
		answer.p, answer.err = p, err
		root.Send(self, answer)
	}
	a.win = w
}

// switchTo records what this incarnation runs, and puts a switch in the
// call record (an EventFailover of stage "vad", when the call is
// observed): the model unavailable and the energy detector taking over,
// or, after a restart, the model back. An incarnation that runs what the
// one before ran switches nothing.
func (a *Actor) switchTo(ctx actor.Context, energy bool) {
	if a.mode.energy == energy {
		return
	}
	a.mode.energy = energy
	if !a.peers.Events {
		return
	}
	f := &messages.Failover{From: a.model.name(), To: energyName}
	if !energy {
		f.From, f.To = f.To, f.From
	}
	a.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventFailover, Text: string(messages.StageVAD), Failover: f, At: time.Now()})
}

// modelFrame adds a frame to the window and submits full windows; the
// frame goes to stt at once.
func (a *Actor) modelFrame(ctx actor.Context, f *messages.AudioFrame) {
	w := a.win
	if w.rate == 0 {
		w.rate = f.Rate
	}
	// The samples are copied before the frame goes on: from then on it
	// belongs to stt, which may hand it back to its pool.
	defer ctx.Send(a.peers.STT, f)
	if a.eot != nil {
		a.eotListen(f.PCM, f.Rate)
	}
	pcm, start, rate := f.PCM, f.Start, f.Rate
	if rate != w.rate {
		a.stats.Inc("rate_mismatches")
		return
	}
	sample := time.Second / time.Duration(rate)
	for i := 0; i < len(pcm); {
		if w.n == 0 {
			w.start = start.Add(time.Duration(i) * sample)
		}
		c := copy(w.buf[w.n:], pcm[i:])
		w.n += c
		i += c
		if w.n == len(w.buf) {
			a.windowFull(ctx)
			w.n = 0
		}
	}
}

func (a *Actor) windowFull(ctx actor.Context) {
	w := a.win
	if !w.flying {
		a.submit(ctx, w.buf, w.start)
		return
	}
	if len(w.ready) > 0 {
		a.stats.Inc("windows_skipped")
	}
	w.ready = append(w.ready[:0], w.buf...)
	w.readyAt = w.start
}

// submit scores a window: under the floor at once, else on the scorer.
// No window is in flight.
func (a *Actor) submit(ctx actor.Context, pcm []int16, start time.Time) {
	w := a.win
	if w.floorSq > 0 && below(pcm, w.floorSq) {
		a.stats.Inc("windows_below_floor")
		a.scoredWindow(ctx, 0, start)
		return
	}
	if err := w.scorer.Score(pcm, w.done); err != nil {
		a.stats.Inc("windows_refused")
		return
	}
	a.stats.Inc("windows")
	w.flying, w.flyAt = true, start
}

// modelScored feeds the gate with the answer for the window in flight
// and submits the window that waited.
func (a *Actor) modelScored(ctx actor.Context, m *scored) {
	w := a.win
	if w == nil || !w.flying {
		return
	}
	w.flying = false
	if m.err != nil {
		a.stats.Inc("window_errors")
	} else {
		a.scoredWindow(ctx, m.p, w.flyAt)
	}
	if len(w.ready) > 0 {
		// The scorer copied buf before returning, so ready can go now.
		// (A ready window under the floor is scored here at once, and
		// ready is emptied before any frame can refill it.)
		a.submit(ctx, w.ready, w.readyAt)
		w.ready = w.ready[:0]
	}
}

// scoredWindow feeds the gate with the probability of the window that
// started at start.
func (a *Actor) scoredWindow(ctx actor.Context, p float32, start time.Time) {
	w := a.win
	dur := time.Duration(len(w.buf)) * time.Second / time.Duration(w.rate)
	ev, at := w.gate.Process(p, start, dur)
	// Detected in audio time, as the frame path does: the end of the
	// window that decided, not when its score came back (the inference's
	// own time is the engine's, counted after it).
	a.emit(ctx, ev, at, start.Add(dur))
	a.quietWindow(p, dur)
}

// below says whether pcm's mean square is under floorSq.
func below(pcm []int16, floorSq int64) bool {
	var sum int64
	for _, v := range pcm {
		sum += int64(v) * int64(v)
	}
	return sum < floorSq*int64(len(pcm))
}

// quietWindow counts a scored window towards ResetAfterSilence and resets
// the scorer's state when the stretch reaches it. No window is in flight
// here: the one just answered was the only one.
func (a *Actor) quietWindow(p float32, dur time.Duration) {
	w := a.win
	if p >= SilenceBelow || w.gate.Speaking() {
		w.quiet = 0
		return
	}
	before := w.quiet
	w.quiet += dur
	if r, ok := w.scorer.(StateResetter); ok && before < ResetAfterSilence && w.quiet >= ResetAfterSilence {
		if err := r.Reset(); err != nil {
			a.stats.Inc("model_reset_errors")
			return
		}
		a.stats.Inc("model_resets")
	}
}

func (a *Actor) stopModel() {
	if a.win != nil {
		_ = a.win.scorer.Close()
		a.win = nil
	}
}
