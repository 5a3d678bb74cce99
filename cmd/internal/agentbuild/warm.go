package agentbuild

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/brisvox/brisvox/agent/agentfile"
	"github.com/brisvox/brisvox/providers"
)

// The warm-up probes a stage may choose (its warm setting).
const (
	// WarmModels is the provider's own warm-up (Warm): for an HTTP LLM a
	// GET of the model list, for the others a connection or a model load.
	WarmModels = "models"
	// WarmRequest is a minimal real request (providers.RequestWarmer).
	WarmRequest = "request"
	// WarmNone skips the warm-up: the first call opens what it needs.
	WarmNone = "none"
)

// warmSetting is a stage's choice of probe and whether its failure stops
// Open.
type warmSetting struct {
	Mode     string // WarmModels ("" too), WarmRequest or WarmNone
	Required bool
}

// probe is one warm-up Open runs.
type probe struct {
	stage, provider string
	rate            int    // stt only
	name            string // the mode: WarmModels or WarmRequest
	what            string // "GET /models"
	required        bool
	run             func(context.Context) error
}

// WarmError is a warm-up probe that failed. Its message names the stage,
// the provider and the probe, and says what to write instead; it holds no
// host, URL query or key (the cause's are cut out). It wraps ErrWarm and
// the provider's error.
type WarmError struct {
	Stage, Provider string
	// Rate is the stt's input rate (0 for the other stages).
	Rate int
	// Probe is the mode that failed (WarmModels, WarmRequest); What says
	// what it sent ("GET /models").
	Probe, What string
	// Err is the provider's error.
	Err error
	// hint is what to write instead, in the file's syntax.
	hint string
}

func (e *WarmError) Error() string {
	var b strings.Builder
	b.WriteString(e.Stage + " " + e.Provider)
	if e.Rate != 0 {
		fmt.Fprintf(&b, " at %d Hz", e.Rate)
	}
	fmt.Fprintf(&b, ": warm probe %q (%s) failed: %s", e.Probe, e.What, scrub(e.Err))
	if e.hint != "" {
		b.WriteString("; " + e.hint)
	}
	return b.String()
}

// Unwrap gives ErrWarm and the provider's error.
func (e *WarmError) Unwrap() []error { return []error{ErrWarm, e.Err} }

// probes are the warm-ups of the stages, in order (stt by rate, llm,
// tts); a stage whose warm setting is WarmNone has none. A WarmRequest
// for a provider without one is an error (Build reports it).
func (a *Agent) probes() ([]probe, error) {
	var out []probe
	add := func(stage string, p agentfile.Provider, rate int, v any, warm func(context.Context) error) error {
		set := a.warm[stage]
		pr := probe{stage: stage, provider: p.Name, rate: rate, name: WarmModels, what: "Warm", required: set.Required, run: warm}
		rw, canRequest := v.(providers.RequestWarmer)
		if canRequest {
			pr.what, _ = rw.WarmProbes()
		}
		switch set.Mode {
		case WarmNone:
			return nil
		case WarmRequest:
			if !canRequest {
				return fmt.Errorf("%w: %s %q has no %q probe", ErrWarmMode, stage, p.Name, WarmRequest)
			}
			_, pr.what = rw.WarmProbes()
			pr.name, pr.run = WarmRequest, rw.WarmRequest
		case WarmModels, "":
		default:
			return fmt.Errorf("%w: %s warm %q", ErrWarmMode, stage, set.Mode)
		}
		out = append(out, pr)
		return nil
	}
	rates := make([]int, 0, len(a.stt))
	for r := range a.stt {
		rates = append(rates, r)
	}
	slices.Sort(rates)
	var errs []error
	for _, r := range rates {
		errs = append(errs, add("stt", a.file.STT, r, a.stt[r], a.stt[r].Warm))
	}
	errs = append(errs, add("llm", a.file.LLM, 0, a.llm, a.llm.Warm))
	errs = append(errs, add("tts", a.file.TTS, 0, a.tts, a.tts.Warm))
	return out, errors.Join(errs...)
}

// warmUp runs the probes in order. A failed probe is Open's error when
// its stage requires it; otherwise it is logged once, counted, and the
// next probe runs.
func (a *Agent) warmUp(ctx context.Context) error {
	probes, err := a.probes()
	if err != nil {
		return err
	}
	for _, p := range probes {
		err := p.run(ctx)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return err // shutting down: not the provider's failure
		}
		we := &WarmError{Stage: p.stage, Provider: p.provider, Rate: p.rate, Probe: p.name, What: p.what, Err: err,
			hint: a.warmHint(p)}
		if p.required {
			return we
		}
		a.warmFailures.Add(1)
		ev := a.log.Warn().Str("stage", p.stage).Str("provider", p.provider).Str("probe", p.name).Str("error", scrub(err))
		if p.rate != 0 {
			ev = ev.Int("rate", p.rate)
		}
		ev.Msg("warm-up probe failed; serving without it")
	}
	return nil
}

// WarmFailures counts the warm-up probes that failed without stopping
// Open (their stage did not require them).
func (a *Agent) WarmFailures() int { return int(a.warmFailures.Load()) }

// warmHint says what to write in the stage's table instead of the probe
// that failed, in the file's syntax.
func (a *Agent) warmHint(p probe) string {
	var modes []string
	if p.name != WarmRequest {
		if _, ok := a.stageProvider(p.stage).(providers.RequestWarmer); ok {
			modes = append(modes, WarmRequest)
		}
	}
	if p.name != WarmModels {
		modes = append(modes, WarmModels)
	}
	modes = append(modes, WarmNone)
	if a.file.Format == agentfile.YAML {
		return fmt.Sprintf("set warm: %s under %s:", strings.Join(modes, " or "), p.stage)
	}
	quoted := make([]string, len(modes))
	for i, m := range modes {
		quoted[i] = fmt.Sprintf("%q", m)
	}
	return fmt.Sprintf("set warm = %s in [%s]", strings.Join(quoted, " or "), p.stage)
}

// stageProvider is one provider of the stage (any rate's, for stt).
func (a *Agent) stageProvider(stage string) any {
	switch stage {
	case "llm":
		return a.llm
	case "tts":
		return a.tts
	}
	for _, s := range a.stt {
		return s
	}
	return nil
}

// scrub is err's message without the hosts, addresses and URLs (with
// their queries) that net/http and the dialers put in it.
func scrub(err error) string {
	s := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		s = strings.Replace(s, ue.Error(), ue.Op+": "+ue.Err.Error(), 1)
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			s = strings.ReplaceAll(s, u.Host, "<host>")
			if h := u.Hostname(); h != "" {
				s = strings.ReplaceAll(s, h, "<host>")
			}
		}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Addr != nil {
		s = strings.ReplaceAll(s, oe.Addr.String(), "<host>")
	}
	return s
}
