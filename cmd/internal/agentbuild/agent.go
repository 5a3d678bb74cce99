package agentbuild

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brisvox/brisvox/actors/llm"
	"github.com/brisvox/brisvox/actors/pacer"
	"github.com/brisvox/brisvox/actors/session"
	"github.com/brisvox/brisvox/actors/turn"
	"github.com/brisvox/brisvox/actors/vad"
	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/agent/endofturn"
	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/cmd/internal/serve"
	"github.com/brisvox/brisvox/media"
	"github.com/brisvox/brisvox/media/conn"
	"github.com/brisvox/brisvox/media/silero"
	"github.com/brisvox/brisvox/messages"
	"github.com/brisvox/brisvox/providers"
	"github.com/rs/zerolog"
)

// ConfirmEvery is how often the pacer asks a carrier's client to confirm
// playback (a mark every 100 ms of audio): at a cut, what was heard is
// known to the last echo plus the time since it came.
const ConfirmEvery = 100 * time.Millisecond

// PacerFor sets the pacer's settings that follow from the call's
// connection c on p:
//   - a transport that queues audio ahead of the wire (OutputLead: the SIP
//     and WebRTC outputs' talk-spurt prebuffer) widens the lead margin by
//     it (audio queued there is not heard yet) and gets that lead less a
//     frame at the start of playout (StartLead), so its first packet does
//     not wait a frame period for the prebuffer's second frame;
//   - a carrier's client that confirms playback gets a mark every
//     ConfirmEvery: the heard position at a cut is bounded by its newest
//     echo, whatever it buffers.
func PacerFor(c conn.Conn, p pacer.Config) pacer.Config {
	if l, ok := c.(interface{ OutputLead() time.Duration }); ok {
		// The margin covers the network and the far jitter buffer (its
		// default) plus the transport's own lead.
		lead := l.OutputLead()
		p.LeadMargin = messages.FrameDuration + lead
		f := messages.FrameDuration
		p.StartLead = min(max((lead-f+f-1)/f*f, 0), pacer.MaxStartLead)
	}
	if pc, ok := c.(conn.PlaybackConfirmer); ok && pc.ConfirmsPlayback() {
		p.ConfirmEvery = ConfirmEvery
	}
	return p
}

// Options are what the builder needs beyond the file.
type Options struct {
	Log zerolog.Logger
	// Silero locates the native files of the Silero VAD (zero: the
	// environment, then .native/).
	Silero silero.PoolConfig
}

// Agent is a built agent: its providers, settings and tool stores. It
// serves any number of calls (serve.Agent).
type Agent struct {
	file *agentfile.File
	opts Options
	log  zerolog.Logger

	stt     map[int]providers.STT // by input rate
	llm     providers.LLM
	tts     providers.TTS
	closers []io.Closer
	tools   *catalogue
	// warm is each stage's warm-up choice, by stage ("stt", "llm", "tts").
	warm         map[string]warmSetting
	warmFailures atomic.Int64

	mu     sync.Mutex
	pools  map[int]*silero.Pool // by rate, opened by Open
	opened bool
}

var _ serve.Agent = (*Agent)(nil)

// Rates are the input rates the file's transports bring: WebRTC 16 kHz,
// Twilio 8 kHz, the PCM websocket its rate.
func Rates(f *agentfile.File) []int {
	var rs []int
	add := func(r int) {
		if !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	if f.Transports.WebRTC.Enabled.V {
		add(16000)
	}
	if f.Transports.Twilio.Enabled.V {
		add(8000)
	}
	if f.Transports.PCM.Enabled.V {
		add(f.Transports.PCM.Rate.V)
	}
	if f.Transports.SIP.Enabled.V {
		add(f.Transports.SIP.Rate.V)
	}
	slices.Sort(rs)
	return rs
}

// Build makes the agent of a checked file. It does no I/O (Open loads the
// models); its errors are diagnostics at the setting that caused them.
func Build(f *agentfile.File, opts Options) (*Agent, agentfile.Diagnostics) {
	a := &Agent{file: f, opts: opts, log: opts.Log, stt: map[int]providers.STT{}, tools: newCatalogue(), pools: map[int]*silero.Pool{}, warm: map[string]warmSetting{}}
	var ds agentfile.Diagnostics
	report := func(p agentfile.Provider, stage string, err error) {
		hint := ""
		if errors.Is(err, ErrOption) || errors.Is(err, ErrUnknownProvider) {
			hint = "this is a bug of brisvox: the file schema and the provider disagree"
		}
		ds = append(ds, f.Diag(p.Pos, stage, fmt.Sprintf("%s provider %q: %v", stage, p.Name, err), hint))
	}
	for _, rate := range Rates(f) {
		v, c, err := newProvider(f, "stt", f.STT, rate)
		if err != nil {
			report(f.STT, "stt", err)
			continue
		}
		a.stt[rate] = v.(providers.STT)
		a.closers = append(a.closers, c)
	}
	if v, c, err := newProvider(f, "llm", f.LLM, 0); err != nil {
		report(f.LLM, "llm", err)
	} else {
		a.llm = v.(providers.LLM)
		a.closers = append(a.closers, c)
	}
	if v, c, err := newProvider(f, "tts", f.TTS, 0); err != nil {
		report(f.TTS, "tts", err)
	} else {
		a.tts = v.(providers.TTS)
		a.closers = append(a.closers, c)
	}
	stages := []struct {
		stage string
		w     agentfile.Warm
	}{{"stt", f.STTWarm}, {"llm", f.LLMWarm}, {"tts", f.TTSWarm}}
	for _, st := range stages {
		a.warm[st.stage] = warmSetting{Mode: st.w.Mode.V, Required: st.w.Required.V}
	}
	if len(ds) == 0 {
		_, errs := a.probes()
		for _, st := range stages {
			if err := errs[st.stage]; err != nil {
				ds = append(ds, f.Diag(st.w.Mode.Pos, st.stage+".warm", err.Error(), "this is a bug of brisvox: the file schema and the provider disagree"))
			}
		}
	}
	if _, err := a.tools.registry(f.Tools, nil); err != nil {
		ds = append(ds, f.Diag(f.Tools.Pos, "tools", err.Error(), "see docs/TOOLS.md for the catalogue"))
	}
	if len(ds) > 0 {
		_ = a.Close()
		return nil, ds
	}
	return a, nil
}

// File is the agent file the agent was built from.
func (a *Agent) File() *agentfile.File { return a.file }

// Digest is the sha256 (hex) of the agent file (serve.Digester: the
// call records name the agent's version by it).
func (a *Agent) Digest() string { return a.file.Digest }

// Name is the agent's name.
func (a *Agent) Name() string { return a.file.Name.V }

// Open loads what calls need before the first one comes: the Silero pools
// for the transports' rates, and warms the providers (a model load, a
// connection) with the probe each stage's warm setting chooses. A failed
// probe is Open's error (a WarmError) only where the stage requires it;
// otherwise it is logged once and counted (WarmFailures) and the calls
// open what they need. An error names the file or service that failed.
func (a *Agent) Open(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.opened {
		return nil
	}
	if a.file.VAD.Engine.V == "silero" {
		for _, rate := range Rates(a.file) {
			cfg := a.opts.Silero
			cfg.SampleRate = rate
			p, err := silero.NewPool(cfg)
			if err != nil {
				return fmt.Errorf("silero vad at %d Hz: %w", rate, err)
			}
			a.pools[rate] = p
		}
	}
	if err := a.warmUp(ctx); err != nil {
		return err
	}
	a.opened = true
	return nil
}

// Session is a call's config (serve.Agent).
func (a *Agent) Session(env serve.CallEnv) (session.Config, error) {
	rate := env.Conn.InputRate()
	stt, ok := a.stt[rate]
	if !ok {
		return session.Config{}, fmt.Errorf("agentbuild: no stt for %d Hz audio (the agent file's transports bring %v)", rate, Rates(a.file))
	}
	reg, err := a.tools.registry(a.file.Tools, env.Ender)
	if err != nil {
		return session.Config{}, err
	}
	f := a.file
	prompt, greeting, greetAfter, err := a.opening(env.Dial)
	if err != nil {
		return session.Config{}, err
	}
	cfg := session.Config{
		STT: stt, LLM: a.llm, TTS: a.tts, Tools: reg, Log: a.log,
		Greeting: greeting, GreetAfter: greetAfter, EndLine: f.EndLine.V,
		Turn: turn.Config{
			EndOfTurnDelay: f.Turn.EndOfTurnDelay.V, BargeInDelay: f.Turn.BargeInDelay.V,
			Speculate: f.Turn.Speculate.V, DrainTimeout: f.Turn.DrainTimeout.V,
			DTMF: turn.DTMFConfig{
				Mode: turn.DTMFMode(f.DTMF.Mode.V), InterDigitTimeout: f.DTMF.InterDigitTimeout.V, MaxDigits: f.DTMF.MaxDigits.V,
			},
		},
		LLMConfig: llm.Config{
			System: prompt, MaxRounds: f.Rounds.MaxRounds.V, RoundTimeout: f.Rounds.RoundTimeout.V,
			FallbackLine: f.Rounds.FallbackLine.V,
			FillerAfter:  f.Fillers.After.V, FillerPerTool: f.Fillers.PerTool.V,
		},
	}
	if f.Turn.ByText.V {
		// The policy reads the transcript: EndOfTurnDelay after words
		// that read as finished, EndOfTurnMax after words left hanging.
		cfg.Turn.EndOfTurn = &endofturn.PolicyConfig{MinDelay: f.Turn.EndOfTurnDelay.V, MaxDelay: f.Turn.EndOfTurnMax.V}
		cfg.Turn.EndOfTurnDelay, cfg.Turn.EndOfTurnByText = 0, true
	}
	cfg.Pacer = PacerFor(env.Conn, cfg.Pacer)
	if term := f.DTMF.Terminator.V; term != "" {
		cfg.Turn.DTMF.Terminator = term[0]
	}
	for _, p := range f.Fillers.Phrases {
		cfg.LLMConfig.Fillers = append(cfg.LLMConfig.Fillers, p.V)
	}
	if w := f.Rounds.WindowTokens.V; w != 0 {
		cfg.LLMConfig.Window = agent.WindowConfig{MaxTokens: w}
	}
	switch f.VAD.Engine.V {
	case "silero":
		a.mu.Lock()
		pool := a.pools[rate]
		a.mu.Unlock()
		if pool == nil {
			return session.Config{}, fmt.Errorf("agentbuild: the silero vad at %d Hz is not open (Open not called)", rate)
		}
		gate := media.SpeechGateConfig{
			StartThreshold: float32(f.VAD.Silero.Threshold.V), StopThreshold: float32(f.VAD.Silero.StopThreshold.V),
			MinSpeech: f.VAD.Silero.MinSpeech.V, Hangover: f.VAD.Silero.Hangover.V,
		}
		if _, err := media.NewSpeechGate(gate); err != nil {
			return session.Config{}, err
		}
		cfg.VADModel = &vad.Model{
			NewScorer: func() (vad.Scorer, error) { return pool.NewScorer(0), nil },
			NewGate: func() vad.Gate {
				g, _ := media.NewSpeechGate(gate) // checked above
				return g
			},
			Floor: vad.FloorOf(f.VAD.Silero.FloorDBFS.V),
		}
	default:
		cfg.VAD = media.EnergyVADConfig{
			Threshold: f.VAD.Energy.Threshold.V, StartAfter: f.VAD.Energy.StartAfter.V, StopAfter: f.VAD.Energy.StopAfter.V,
		}
	}
	return cfg, nil
}

// CheckVariables refuses a dial whose variables lack a placeholder of
// the prompt or the greetings (serve.VariableChecker): the error names
// the missing ones, never a value.
func (a *Agent) CheckVariables(vars map[string]string) error {
	var missing []string
	for _, name := range a.file.Variables() {
		if _, ok := vars[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: the agent file uses %s", agentfile.ErrMissingVariable, strings.Join(missing, ", "))
	}
	return nil
}

// opening is a call's prompt and greeting with its variables in, and how
// long the greeting waits. A call that came in has no variables: its
// placeholders read as empty text. One we placed greets with
// [outbound]'s greeting, after the callee's first words unless the file
// has it speak first (and the dial did not ask to wait).
func (a *Agent) opening(dial *serve.DialRequest) (prompt, greeting string, after time.Duration, err error) {
	f := a.file
	vars := map[string]string{}
	greeting = f.Greeting.V
	if dial != nil {
		vars = dial.Variables
		greeting = f.Outbound.Greeting.V
		if !f.Outbound.SpeakFirst.V || dial.WaitForCallee {
			after = f.Outbound.FirstWordsWait.V
		}
	} else {
		for _, name := range f.Variables() {
			vars[name] = ""
		}
	}
	if prompt, err = agentfile.Expand(f.Prompt.V, vars); err != nil {
		return "", "", 0, fmt.Errorf("agentbuild: prompt: %w", err)
	}
	if greeting, err = agentfile.Expand(greeting, vars); err != nil {
		return "", "", 0, fmt.Errorf("agentbuild: greeting: %w", err)
	}
	return prompt, greeting, after, nil
}

// VADPoolStats reads the Silero pools' counters by sample rate (none
// before Open, or with another VAD engine).
func (a *Agent) VADPoolStats() map[int]silero.PoolStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[int]silero.PoolStats, len(a.pools))
	for rate, p := range a.pools {
		out[rate] = p.Stats()
	}
	return out
}

// Close releases the providers and the pools.
func (a *Agent) Close() error {
	var errs []error
	for _, c := range a.closers {
		errs = append(errs, c.Close())
	}
	a.closers = nil
	a.mu.Lock()
	for _, p := range a.pools {
		errs = append(errs, p.Close())
	}
	a.pools = map[int]*silero.Pool{}
	a.mu.Unlock()
	return errors.Join(errs...)
}
