package agentfile

import (
	"strings"

	"github.com/brisvox/brisvox/providers"
)

// warmKeys are a stage's warm settings, read before its provider so they
// are not taken for provider options, and checked once it is known.
type warmKeys struct {
	t        *tbl
	stage    string
	mode     *entry
	required Value[bool]
}

// warmOf takes warm and warm_required from a stage's table.
func (w *walker) warmOf(t *tbl, stage string) warmKeys {
	return warmKeys{t: t, stage: stage, mode: t.take("warm"), required: t.boolean("warm_required", false)}
}

// check decides the stage's Warm for provider p: the written mode if the
// provider offers it, else its default (the first of its list).
func (k warmKeys) check(p Provider, specs []providers.Options) Warm {
	w := k.t.w
	var spec *providers.Options
	for i := range specs {
		if specs[i].Vendor == p.Name {
			spec = &specs[i]
		}
	}
	out := Warm{Required: k.required, Mode: Value[string]{Pos: k.t.pos}}
	if spec != nil {
		out.Mode.V = spec.Warm[0]
		out.Mode.Pos = p.Pos
	}
	if k.mode == nil {
		k.requiredNothing(out, spec)
		return out
	}
	v, path := k.mode.val, k.stage+".warm"
	out.Mode.Pos = v.pos
	if v.kind != kString {
		k.t.typeErr(k.mode, "a string", "none")
		return out
	}
	if spec == nil {
		// The provider is unknown or missing (reported): its probes are.
		out.Mode.V, out.Mode.Set = v.str, true
		return out
	}
	if !contains(spec.Warm, v.str) {
		hint := w.format.Setting("warm", spec.Warm[0]) + " (" + p.Name + "'s default)"
		if len(spec.Warm) > 1 {
			hint += ", or " + w.format.Setting("warm", "none") + " to skip the probe"
		}
		w.at(v.pos, path, showValue(v.str)+" is not a warm-up of "+p.Name+" (it offers "+strings.Join(spec.Warm, ", ")+")", hint)
		return out
	}
	out.Mode.V, out.Mode.Set = v.str, true
	k.requiredNothing(out, spec)
	return out
}

// requiredNothing reports warm_required where no probe runs.
func (k warmKeys) requiredNothing(out Warm, spec *providers.Options) {
	if !out.Required.V || out.Mode.V != "none" || spec == nil {
		return
	}
	w := k.t.w
	hint := "remove warm_required (" + spec.Vendor + " has no probe)"
	if spec.Warm[0] != "none" {
		hint = "remove warm_required, or choose a probe: " + w.format.Setting("warm", spec.Warm[0])
	}
	w.at(out.Required.Pos, k.stage+".warm_required", "warm_required with no warm-up: nothing can fail", hint)
}
