package turn

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/brisvox/brisvox/actors/kit"
	"github.com/brisvox/brisvox/agent/endofturn"
	"github.com/brisvox/brisvox/messages"
)

// Config tunes turn taking.
type Config struct {
	// EndOfTurnDelay is extra silence required after the VAD stop and the
	// last final before the turn ends (0: end at once).
	EndOfTurnDelay time.Duration
	// BargeInDelay is how long the caller must keep speaking over the bot
	// before it is interrupted (0: at the VAD start).
	BargeInDelay time.Duration
	// DrainTimeout bounds how long the closing line of EndCall may take.
	DrainTimeout time.Duration
	// Speculate starts the answer when the caller has gone quiet and the
	// transcript is final, while EndOfTurnDelay still runs: the turn goes
	// out marked Speculative, nothing of its answer is played and none of
	// its SideEffect calls runs until the delay passes in silence (Commit);
	// speech or a new transcript before that takes it back (Discard). The
	// delay then hides the model's first-token latency. Off by default:
	// a discarded speculation is a paid request. Needs an end-of-turn
	// delay (EndOfTurnDelay or EndOfTurn).
	Speculate bool
	// EndOfTurn, when set, replaces the fixed EndOfTurnDelay by the
	// end-of-turn model's estimate (messages.TurnEstimate, from the vad
	// actor): the turn ends at the end of speech plus the policy's delay
	// for the estimate (endofturn.Policy.Delay), and waits MaxDelay when no
	// estimate comes. It cannot be combined with EndOfTurnDelay.
	EndOfTurn *endofturn.PolicyConfig
	// EndOfTurnByText, with EndOfTurn, estimates each pause from the
	// transcript heard so far (endofturn.Text) until a model's estimate
	// of it comes (none comes without a TurnModel): words that read as
	// finished end the turn MinDelay after the end of speech, words left
	// hanging ("a table for", "at seven and", "um") wait MaxDelay, so
	// that a caller pausing mid-sentence is not cut by a short hangover.
	EndOfTurnByText bool
	// DTMF says what the caller's key presses do (see the package doc).
	DTMF DTMFConfig
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.EndOfTurnDelay < 0 || c.BargeInDelay < 0 || c.DrainTimeout < 0 {
		return fmt.Errorf("%w: negative duration", ErrInvalidConfig)
	}
	if c.EndOfTurn != nil {
		if c.EndOfTurnDelay != 0 {
			return fmt.Errorf("%w: an end-of-turn model and a fixed end-of-turn delay together", ErrInvalidConfig)
		}
		if err := c.EndOfTurn.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	if c.EndOfTurnByText && c.EndOfTurn == nil {
		return fmt.Errorf("%w: an end of turn by text needs the end-of-turn policy (EndOfTurn)", ErrInvalidConfig)
	}
	if c.Speculate && c.EndOfTurnDelay == 0 && c.EndOfTurn == nil {
		return fmt.Errorf("%w: speculation needs an end-of-turn delay to hide the request in", ErrInvalidConfig)
	}
	return c.DTMF.Validate()
}

// WithDefaults fills zero fields that have a default.
func (c Config) WithDefaults() Config {
	if c.DrainTimeout == 0 {
		c.DrainTimeout = 15 * time.Second
	}
	c.DTMF = c.DTMF.WithDefaults()
	return c
}

type endTurnDue struct{ gen int }
type bargeInDue struct{ gen int }
type drainDue struct{}

// Actor decides turns and barge-ins.
type Actor struct {
	cfg   Config
	peers kit.Peers
	stats kit.Counters

	store     *atomic.Uint64 // the newest epoch, kept across restarts
	epoch     messages.Epoch // newest epoch
	epochUsed bool           // a UserTurn or Say went out under epoch
	busy      bool           // the bot works on epoch (thinking or talking)

	speaking bool
	// utteranceStart is when the speech of the turn being heard began.
	utteranceStart time.Time
	speechEnd      time.Time
	// speechDecided is when the VAD decided speechEnd (its DetectedAt:
	// the end of the frame or window that made the decision).
	speechDecided time.Time
	stopped       bool // a VAD stop is waiting to become a turn end
	owed          int  // finals owed for finalizes
	finals        []string
	lastInterim   string
	finalAt       time.Time
	gen           int

	// keys are the caller's key presses of the turn being heard.
	keys keys

	draining bool
	timers   [5]*time.Timer // end of turn, barge-in, drain, inter-digit, greeting

	// spec is the epoch of the speculative turn out (0: none) and
	// specText its text.
	spec     messages.Epoch
	specText string

	// policy turns the end-of-turn model's estimates into delays (nil: the
	// fixed EndOfTurnDelay); estimate is the newest one.
	policy   *endofturn.Policy
	estimate *messages.TurnEstimate
}

const (
	timerEnd = iota
	timerBargeIn
	timerDrain
	timerKeys
	timerGreet
)

// after arms timer i to send msg to the actor after d, replacing the last
// one; the timers are stopped when the actor stops.
func (a *Actor) after(ctx actor.Context, i int, d time.Duration, msg any) {
	if t := a.timers[i]; t != nil {
		t.Stop()
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	a.timers[i] = time.AfterFunc(d, func() { root.Send(self, msg) })
}

func (a *Actor) stopTimers() {
	for _, t := range a.timers {
		if t != nil {
			t.Stop()
		}
	}
}

// Props makes the turn actor's props.
func Props(cfg Config, peers kit.Peers, opts ...actor.PropsOption) *actor.Props {
	cfg = cfg.WithDefaults()
	// Epochs only grow, across restarts too: a restarted turn actor that
	// began again at 1 would have all its output dropped as stale.
	store := new(atomic.Uint64)
	// The counts are the stage's over the call: they survive restarts.
	stats := kit.Counters{}
	return actor.PropsFromProducer(func() actor.Actor {
		a := &Actor{cfg: cfg, peers: peers, stats: stats, store: store, epoch: messages.Epoch(store.Load()), epochUsed: true}
		if cfg.EndOfTurn != nil {
			a.policy, _ = endofturn.NewPolicy(*cfg.EndOfTurn) // validated with the config
		}
		return a
	}, opts...)
}

// Receive handles the actor's messages.
func (a *Actor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *messages.SpeechStarted:
		if a.utteranceStart.IsZero() {
			a.utteranceStart = m.At
		}
		a.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventUserSpeaking, At: m.At})
		a.speechStarted(ctx)
	case *messages.SpeechStopped:
		a.speaking = false
		a.stopped = true
		a.owed++
		a.speechEnd, a.speechDecided = m.At, m.DetectedAt
		a.tryEnd(ctx)
	case *messages.Transcript:
		a.transcript(ctx, m)
	case *messages.TurnEstimate:
		a.turnEstimate(ctx, m)
	case *messages.SttFailed:
		a.stats.Inc("stt_failures")
		a.owed = 0
		a.tryEnd(ctx)
	case *endTurnDue:
		// stopped: a timer that fired while being replaced (an estimate
		// re-armed it) must not end the next turn early.
		if m.gen == a.gen && a.stopped {
			a.endTurn(ctx)
		}
	case *bargeInDue:
		if m.gen == a.gen && a.speaking && a.busy {
			a.interrupt(ctx)
		}
	case *messages.DTMF:
		a.key(ctx, m)
	case *keysDue:
		if m.gen == a.keys.gen && a.keys.open {
			a.closeKeys(ctx)
		}
	case *messages.PlayoutDone:
		if m.Epoch == a.epoch {
			a.busy = false
			if a.draining {
				ctx.Send(a.peers.Session, &messages.CallDrained{})
			}
		}
	case *messages.EndCall:
		a.endCall(ctx, m)
	case *messages.Greet:
		if m.After > 0 {
			// Wait for the caller's first words: greet then only if
			// none came (greet's own check).
			a.after(ctx, timerGreet, m.After, &messages.Greet{Line: m.Line})
			return
		}
		a.greet(ctx, m)
	case *drainDue:
		ctx.Send(a.peers.Session, &messages.CallDrained{})
	case *messages.Describe:
		state := "listening"
		switch {
		case a.draining:
			state = "draining"
		case a.keys.open:
			state = "collecting_digits"
		case a.busy:
			state = "bot_busy"
		}
		d := kit.Describe(string(messages.StageTurn), state, a.stats)
		d.Counters["epoch"] = uint64(a.epoch)
		// How many keys the turn being heard has, never which (a PIN).
		d.Counters["digits_pending"] = uint64(len(a.keys.digits))
		d.Ref = m.Ref
		ctx.Respond(d)
	case *actor.Stopping, *actor.Restarting:
		a.stopTimers()
	case *actor.Started, *actor.Stopped:
	default:
		a.stats.Inc("unknown_messages")
	}
}

func (a *Actor) speechStarted(ctx actor.Context) {
	a.speaking = true
	a.gen++ // a pending turn end waits for this speech to stop again
	a.discard(ctx)
	if !a.busy || a.draining {
		return
	}
	if a.cfg.BargeInDelay == 0 {
		a.interrupt(ctx)
		return
	}
	a.after(ctx, timerBargeIn, a.cfg.BargeInDelay, &bargeInDue{gen: a.gen})
}

// interrupt starts a new epoch and stops the output of the old one.
func (a *Actor) interrupt(ctx actor.Context) {
	a.epoch++
	a.store.Store(uint64(a.epoch))
	a.epochUsed = false
	a.busy = false
	a.stats.Inc("interrupts")
	now := time.Now()
	a.peers.Mark(ctx, a.epoch, messages.MarkInterrupt, now)
	// Pacer first: it settles what was heard before the llm asks for it.
	for _, pid := range []*actor.PID{a.peers.Pacer, a.peers.TTS, a.peers.Tools, a.peers.LLM} {
		ctx.Send(pid, &messages.Interrupt{Epoch: a.epoch, At: now})
	}
}

func (a *Actor) transcript(ctx actor.Context, m *messages.Transcript) {
	if !m.Final {
		a.lastInterim = m.Text
		return
	}
	if t := strings.TrimSpace(m.Text); t != "" {
		a.finals = append(a.finals, t)
		a.lastInterim = ""
		a.discard(ctx) // the turn's text changed
	}
	a.finalAt = m.At
	if m.FromFinalize && a.owed > 0 {
		a.owed--
	}
	a.tryEnd(ctx)
}

// tryEnd ends the turn once the caller is silent and every finalize is
// answered, after the configured extra silence.
func (a *Actor) tryEnd(ctx actor.Context) {
	if a.speaking || !a.stopped || a.owed > 0 {
		return
	}
	a.gen++
	if a.policy != nil {
		if a.cfg.Speculate {
			a.speculate(ctx)
		}
		a.armByEstimate(ctx)
		return
	}
	if a.cfg.EndOfTurnDelay == 0 {
		a.endTurn(ctx)
		return
	}
	if a.cfg.Speculate {
		a.speculate(ctx)
	}
	a.after(ctx, timerEnd, a.cfg.EndOfTurnDelay, &endTurnDue{gen: a.gen})
}

// armByEstimate sets the end of the turn from the end-of-turn model: the
// end of speech plus the policy's delay for the estimate of this pause, or
// while no estimate came, for the transcript's (EndOfTurnByText) or the
// longest delay (a later estimate moves it).
func (a *Actor) armByEstimate(ctx actor.Context) {
	delay := a.policy.Config().MaxDelay
	switch e := a.estimate; {
	case e != nil && e.StopAt.Equal(a.speechEnd):
		delay = a.policy.Delay(e.P)
		if e.Err != nil {
			delay = a.policy.Delay(0)
		}
	case a.cfg.EndOfTurnByText:
		delay = a.policy.Delay(endofturn.Text(a.turnText()))
	}
	wait := time.Until(a.speechEnd.Add(delay))
	if wait <= 0 {
		a.endTurn(ctx)
		return
	}
	a.after(ctx, timerEnd, wait, &endTurnDue{gen: a.gen})
}

// turnEstimate records the model's view of a pause; a turn waiting for the
// end of that pause is re-armed with it.
func (a *Actor) turnEstimate(ctx actor.Context, m *messages.TurnEstimate) {
	if a.policy == nil {
		return
	}
	a.stats.Inc("turn_estimates")
	if m.Err != nil {
		a.stats.Inc("turn_estimate_errors")
	}
	a.estimate = m
	if a.stopped && !a.speaking && a.owed == 0 && m.StopAt.Equal(a.speechEnd) {
		a.armByEstimate(ctx)
	}
}

// turnText is what the caller said in the turn so far, then the keys
// pressed, as one sentence each.
func (a *Actor) turnText() string {
	speech := strings.Join(a.finals, " ")
	if len(a.finals) == 0 {
		// A session failure may leave only interims: better than nothing.
		speech = strings.TrimSpace(a.lastInterim)
	}
	if !a.keys.pending() {
		return speech
	}
	if speech == "" {
		return a.keys.text()
	}
	if !strings.ContainsAny(speech[len(speech)-1:], ".?!") {
		speech += "."
	}
	return speech + " " + a.keys.text()
}

// speculate sends the turn ahead of its end, once per text.
func (a *Actor) speculate(ctx actor.Context) {
	text := a.turnText()
	// Keys make the turn's end wait for the inter-digit timeout or a
	// terminator, not for silence: nothing to hide there.
	if a.spec != 0 || text == "" || a.busy || a.draining || a.keys.pending() {
		return
	}
	a.spec, a.specText = a.nextEpoch(), text
	a.stats.Inc("speculations")
	ctx.Send(a.peers.LLM, &messages.UserTurn{Epoch: a.spec, Text: text, SpeechStart: a.utteranceStart, SpeechEnd: a.speechEnd, At: time.Now(), Speculative: true})
}

// discard takes back the speculative turn out, if any: its epoch is spent.
func (a *Actor) discard(ctx actor.Context) {
	if a.spec == 0 {
		return
	}
	a.stats.Inc("speculations_discarded")
	ctx.Send(a.peers.LLM, &messages.Discard{Epoch: a.spec})
	a.spec, a.specText = 0, ""
}

func (a *Actor) endTurn(ctx actor.Context) {
	a.stopped = false
	if a.keys.open {
		// The caller is still pressing keys: the speech heard so far
		// waits for them (closeKeys ends the turn).
		a.stats.Inc("speech_held")
		return
	}
	text := a.turnText()
	a.finals, a.lastInterim = a.finals[:0], ""
	start, end, finalAt, decided := a.utteranceStart, a.speechEnd, a.finalAt, a.speechDecided
	keys := len(a.keys.digits)
	if k := &a.keys; k.pending() {
		// The caller's input ran from the first sound or key to the last:
		// a turn of keys alone has its last key as its end of speech (the
		// base of its latency, as the VAD stop is for speech).
		if start.IsZero() {
			end, finalAt, decided = k.last, time.Time{}, time.Time{}
		}
		if start.IsZero() || k.first.Before(start) {
			start = k.first
		}
		if k.last.After(end) {
			end = k.last
		}
		a.stats.Inc("dtmf_turns")
		k.reset()
	}
	a.utteranceStart = time.Time{}
	if a.spec != 0 && (text != a.specText || a.draining) {
		a.discard(ctx)
	}
	if text == "" || a.draining {
		a.stats.Inc("empty_turns")
		return
	}
	var e messages.Epoch
	if a.spec != 0 {
		e = a.spec
	} else {
		e = a.nextEpoch()
	}
	a.busy = true
	a.stats.Inc("turns")
	now := time.Now()
	a.peers.Mark(ctx, e, messages.MarkVADStop, end)
	if !decided.IsZero() {
		a.peers.Mark(ctx, e, messages.MarkVADDetected, decided)
	}
	if !finalAt.IsZero() {
		a.peers.Mark(ctx, e, messages.MarkSTTFinal, finalAt)
	}
	a.peers.Mark(ctx, e, messages.MarkTurnEnd, now)
	turn := messages.UserTurn{Epoch: e, Text: text, SpeechStart: start, SpeechEnd: end, At: now}
	a.peers.Event(ctx, &messages.CallEvent{Kind: messages.EventUserTurn, Epoch: e, Text: text, Keys: keys, At: now})
	if a.spec != 0 {
		a.spec, a.specText = 0, ""
		a.stats.Inc("speculations_committed")
		ctx.Send(a.peers.LLM, &messages.Commit{Turn: turn})
		return
	}
	ctx.Send(a.peers.LLM, &turn)
}

// nextEpoch returns the epoch for new output: the current one if nothing
// went out under it yet (a barge-in opened it), else a new one.
func (a *Actor) nextEpoch() messages.Epoch {
	if a.epochUsed || a.epoch == 0 {
		a.epoch++
		a.store.Store(uint64(a.epoch))
	}
	a.epochUsed = true
	return a.epoch
}

// greet speaks the greeting as the first answer, unless something was
// said already (the caller spoke first, or the call is ending).
func (a *Actor) greet(ctx actor.Context, m *messages.Greet) {
	if a.draining || a.busy || a.epoch != 0 || !a.utteranceStart.IsZero() || a.keys.pending() || m.Line == "" {
		a.stats.Inc("greetings_skipped")
		return
	}
	e := a.nextEpoch()
	a.busy = true
	a.stats.Inc("greetings")
	ctx.Send(a.peers.LLM, &messages.Say{Epoch: e, Text: m.Line})
}

func (a *Actor) endCall(ctx actor.Context, m *messages.EndCall) {
	if a.draining {
		return
	}
	a.dropKeys() // nobody will answer them
	if m.AfterPlayout {
		// The goodbye is the current answer: let it play out, then end.
		a.discard(ctx)
		a.draining = true
		a.after(ctx, timerDrain, a.cfg.DrainTimeout, &drainDue{})
		if !a.busy {
			ctx.Send(a.peers.Session, &messages.CallDrained{})
		}
		return
	}
	a.discard(ctx)
	if a.busy {
		a.interrupt(ctx)
	}
	a.draining = true
	a.after(ctx, timerDrain, a.cfg.DrainTimeout, &drainDue{})
	if m.Line == "" {
		ctx.Send(a.peers.Session, &messages.CallDrained{})
		return
	}
	e := a.nextEpoch()
	a.busy = true
	ctx.Send(a.peers.LLM, &messages.Say{Epoch: e, Text: m.Line})
}
