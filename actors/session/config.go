package session

import (
	"fmt"
	"github.com/asynkron/protoactor-go/actor"
	"time"

	"github.com/brisvox/brisvox/actors/llm"
	"github.com/brisvox/brisvox/actors/pacer"
	"github.com/brisvox/brisvox/actors/tts"
	"github.com/brisvox/brisvox/actors/turn"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/rs/zerolog"
)

// Supervision bounds restarts of the call's stages.
type Supervision struct {
	// MaxRestarts is how many restarts of one stage within Window are
	// allowed; one more ends the call. Default 3.
	MaxRestarts int
	// Window is the period over which restarts count. Default 30 s.
	Window time.Duration
	// Backoff is the first provider-stage restart delay, doubling up to
	// MaxBackoff, plus up to Jitter of it at random. Defaults 100 ms, 2 s,
	// 0.2.
	Backoff    time.Duration
	MaxBackoff time.Duration
	Jitter     float64
	// Seed makes the jitter reproducible.
	Seed uint64
}

// Config is everything one call needs.
type Config struct {
	Call messages.CallID
	Conn conn.Conn
	STT  providers.STT
	LLM  providers.LLM
	TTS  providers.TTS
	// Tools is the registry of the call's tools (nil: none).
	Tools *agent.Registry
	// NewDetector makes the frame detector; default: the energy VAD.
	NewDetector func() vad.Detector
	// VADModel, when set, scores windows with a speech model (Silero) on
	// an inference pool; the detector is the fallback when it is not
	// available.
	VADModel *vad.Model
	// TurnModel, when set, is asked at every speech stop whether the
	// caller's turn is complete; Turn.EndOfTurn must then say how its
	// answer becomes a delay (and the other way round).
	TurnModel vad.TurnModel
	VAD       media.EnergyVADConfig
	Turn      turn.Config
	LLMConfig llm.Config
	// FillerClips are pre-rendered filler phrases (nil: none): the tts
	// stage plays them instead of the provider speaking the phrase.
	FillerClips *tts.ClipStore
	Pacer       pacer.Config
	Supervision Supervision
	// EndLine is spoken when a stage gave up and the call ends.
	EndLine string
	Log     zerolog.Logger
	// Taps put a receiver middleware in front of a stage: the simulator
	// uses them to break one thing on purpose and prove that its checks
	// notice. A tap costs an allocation per message; production leaves
	// Taps empty.
	Taps map[messages.Stage]actor.ReceiverMiddleware
	// Tap, when set, sees the call's audio at the transport: every frame
	// read from the caller and every frame written to them (a call
	// recorder). It copies and never blocks. Nil: no tap, no cost.
	Tap conn.Tap
	// OnEnd is called once when the call is over; it must only hand the
	// value on (a channel send, a message).
	OnEnd func(messages.CallEnded)
	// OnEvent, when set, receives the call's live events (what the caller
	// said, the bot's words as they play, latencies, state) from the
	// session's goroutine; it must only hand them on and never block. The
	// events carry transcripts: they are for the call's page or operator,
	// not for logs. Nil: the stages send no events at all.
	OnEvent func(messages.CallEvent)
	// Greeting, when set, is spoken as the bot's first answer unless the
	// caller speaks first.
	Greeting string
	// GreetAfter delays the greeting: it is spoken only if the caller
	// said nothing for this long (an outbound call waiting for the
	// callee's first words). 0: at once.
	GreetAfter time.Duration
	// LogContent is the operator's debug switch: it logs, at debug level,
	// what the caller said ("caller said"), what the bot said as played
	// ("bot said", cut short by a barge-in or not) and each tool call's
	// arguments (in the tools' trace events). Off, the default, no
	// transcript or argument is ever logged.
	LogContent bool
}

// WithDefaults fills zero fields.
func (c Config) WithDefaults() Config {
	s := &c.Supervision
	if s.MaxRestarts == 0 {
		s.MaxRestarts = 3
	}
	if s.Window == 0 {
		s.Window = 30 * time.Second
	}
	if s.Backoff == 0 {
		s.Backoff = 100 * time.Millisecond
	}
	if s.MaxBackoff == 0 {
		s.MaxBackoff = 2 * time.Second
	}
	if s.Jitter == 0 {
		s.Jitter = 0.2
	}
	if c.EndLine == "" {
		c.EndLine = "I'm sorry, I'm having technical trouble and have to end this call. Please call again."
	}
	if c.Pacer.Rate == 0 && c.Conn != nil {
		c.Pacer.Rate = c.Conn.OutputRate()
	}
	if c.Tools == nil {
		c.Tools, _ = agent.NewRegistry()
	}
	if len(c.LLMConfig.Tools) == 0 {
		for _, s := range agent.OfferedSpecs(c.Tools) {
			if c.LLMConfig.ToolFillers == nil {
				c.LLMConfig.ToolFillers = map[string]time.Duration{}
			}
			c.LLMConfig.ToolFillers[s.Name] = s.FillerAfter
			c.LLMConfig.Tools = append(c.LLMConfig.Tools, providers.ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
		}
	}
	if c.LLMConfig.Clips == nil && c.FillerClips != nil {
		c.LLMConfig.Clips = c.FillerClips
	}
	c.LLMConfig = c.LLMConfig.WithDefaults()
	return c
}

// Validate checks a config after defaults.
func (c Config) Validate() error {
	switch {
	case c.Call == "":
		return fmt.Errorf("%w: no call id", ErrInvalidConfig)
	case c.Conn == nil:
		return fmt.Errorf("%w: no connection", ErrInvalidConfig)
	case c.STT == nil || c.LLM == nil || c.TTS == nil:
		return fmt.Errorf("%w: a provider is missing", ErrInvalidConfig)
	case c.Supervision.MaxRestarts < 0 || c.Supervision.Window < 0 || c.Supervision.Backoff < 0 ||
		c.Supervision.MaxBackoff < c.Supervision.Backoff || c.Supervision.Jitter < 0 || c.Supervision.Jitter > 1:
		return fmt.Errorf("%w: supervision %+v", ErrInvalidConfig, c.Supervision)
	case c.GreetAfter < 0:
		return fmt.Errorf("%w: a negative greeting delay", ErrInvalidConfig)
	}
	if c.Conn.InputRate()%50 != 0 || c.Conn.InputRate() <= 0 {
		return fmt.Errorf("%w: input rate %d", ErrInvalidConfig, c.Conn.InputRate())
	}
	// The policy without a model reads the transcript (EndOfTurnByText).
	if (c.TurnModel != nil && c.Turn.EndOfTurn == nil) || (c.TurnModel == nil && c.Turn.EndOfTurn != nil && !c.Turn.EndOfTurnByText) {
		return fmt.Errorf("%w: an end-of-turn model needs Turn.EndOfTurn, and Turn.EndOfTurn a TurnModel or Turn.EndOfTurnByText", ErrInvalidConfig)
	}
	if c.VADModel != nil && (c.VADModel.NewScorer == nil || c.VADModel.NewGate == nil) {
		return fmt.Errorf("%w: a vad model needs NewScorer and NewGate", ErrInvalidConfig)
	}
	if c.NewDetector == nil {
		if _, err := media.NewEnergyVAD(c.VAD); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	for _, v := range []interface{ Validate() error }{c.Turn, c.LLMConfig, c.Pacer} {
		if err := v.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
		}
	}
	return nil
}
