package agentbuild

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/brisvox/brisvox/cmd/internal/agentfile"
	"github.com/brisvox/brisvox/providers"
)

// The warm-up probes a stage may choose (its warm setting; the file
// offers each provider its own, the first its default).
const (
	// WarmModels is an HTTP LLM's Warm: a GET of the model list.
	WarmModels = "models"
	// WarmRequest is an HTTP LLM's minimal real request
	// (providers.RequestWarmer).
	WarmRequest = "request"
	// WarmConnect is a websocket provider's Warm: a connection opened
	// ahead of the first session.
	WarmConnect = "connect"
	// WarmLoad is a local engine's Warm: its model or voice loaded.
	WarmLoad = "load"
	// WarmNone skips the warm-up: the first call opens what it needs.
	WarmNone = "none"
)

// warmWhat says what each mode that runs Warm does, for the messages;
// an HTTP LLM names its model list by its own path (WarmProbes).
var warmWhat = map[string]string{WarmModels: "GET /models", WarmConnect: "a connection", WarmLoad: "a model load", "": "Warm"}

// warmSetting is a stage's choice of probe and whether its failure stops
// Open.
type warmSetting struct {
	Mode     string // a Warm* mode; "": the provider's Warm
	Required bool
}

// probe is one warm-up Open runs.
type probe struct {
	stage, provider string
	rate            int    // stt only
	name            string // the mode ("" when the file says none)
	what            string // "GET /models", "a connection"
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
// tts); a stage whose warm setting is WarmNone has none. A mode the
// provider cannot run (WarmRequest of a provider without one) is an
// error of its stage (Build reports it at the setting).
func (a *Agent) probes() ([]probe, map[string]error) {
	var out []probe
	add := func(stage string, p agentfile.Provider, rate int, v any, warm func(context.Context) error) error {
		set := a.warm[stage]
		pr := probe{stage: stage, provider: p.Name, rate: rate, name: set.Mode, what: warmWhat[set.Mode], required: set.Required, run: warm}
		rw, isHTTP := v.(providers.RequestWarmer)
		if isHTTP && set.Mode == "" {
			pr.name = WarmModels
		}
		switch pr.name {
		case WarmNone:
			return nil
		case WarmRequest:
			if !isHTTP {
				return fmt.Errorf("%w: %s %q has no %q probe", ErrWarmMode, stage, p.Name, pr.name)
			}
			_, pr.what = rw.WarmProbes()
			pr.run = rw.WarmRequest
		case WarmModels:
			if isHTTP {
				pr.what, _ = rw.WarmProbes()
			}
		case WarmConnect, WarmLoad, "":
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
	errs := map[string]error{}
	note := func(stage string, err error) {
		if err != nil {
			errs[stage] = err
		}
	}
	for _, r := range rates {
		note("stt", add("stt", a.file.STT, r, a.stt[r], a.stt[r].Warm))
	}
	note("llm", add("llm", a.file.LLM, 0, a.llm, a.llm.Warm))
	note("tts", add("tts", a.file.TTS, 0, a.tts, a.tts.Warm))
	return out, errs
}

// warmUp runs the probes in order. A failed probe is Open's error when
// its stage requires it; otherwise it is logged once, counted, and the
// next probe runs.
func (a *Agent) warmUp(ctx context.Context) error {
	probes, errs := a.probes()
	for _, stage := range []string{"stt", "llm", "tts"} {
		if err := errs[stage]; err != nil {
			return err
		}
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
// that failed (the provider's other modes), in the file's syntax.
func (a *Agent) warmHint(p probe) string {
	var modes []string
	for _, info := range agentfile.Providers() {
		if info.Stage == p.stage && info.Name == p.provider {
			for _, m := range info.Warm {
				if m != p.name {
					modes = append(modes, m)
				}
			}
		}
	}
	if len(modes) == 0 {
		return ""
	}
	f := a.file.Format
	alts := make([]string, len(modes))
	alts[0] = f.Setting("warm", modes[0])
	for i, m := range modes[1:] {
		alts[i+1] = valueIn(f, m)
	}
	return "set " + strings.Join(alts, " or ") + " " + tableIn(f, p.stage)
}

// valueIn is v written as format f writes a value ("none" in TOML, none
// in YAML).
func valueIn(f agentfile.Format, v any) string {
	s := f.Setting("k", v)
	if f == agentfile.YAML {
		return strings.TrimPrefix(s, "k: ")
	}
	return strings.TrimPrefix(s, "k = ")
}

// tableIn says where a setting of table goes: "in [transports.pcm]"
// (TOML), "under transports: pcm:" (YAML).
func tableIn(f agentfile.Format, table string) string {
	if f == agentfile.YAML {
		return "under " + strings.ReplaceAll(table, ".", ": ") + ":"
	}
	return "in [" + table + "]"
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
