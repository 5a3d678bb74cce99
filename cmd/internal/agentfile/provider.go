package agentfile

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/brisvox/brisvox/providers"
)

// provider reads the provider of a stage's table t; the keys t knows
// already are the stage's own.
func (w *walker) provider(t *tbl, stage string, specs []providers.Options) Provider {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Vendor
	}
	p := Provider{Pos: t.pos, Options: map[string]Option{}}
	if !t.present() {
		if !t.wrong {
			w.missing(t.pos, stage, "missing: every agent needs a "+stage+" provider",
				fmt.Sprintf("%s (one of %s), or start from %s", w.format.In(stage, "provider", localName(specs)), strings.Join(names, ", "), w.example()))
		}
		return p
	}
	name := t.str("provider", "")
	if !name.Set {
		if t.n.get("provider") == nil {
			w.missing(t.pos, stage+".provider", "missing", w.format.Setting("provider", localName(specs))+" (one of "+strings.Join(names, ", ")+")")
		}
		t.done("key", "", func(string) bool { return true })
		return p
	}
	p.Name, p.Pos = name.V, name.Pos
	var spec *providers.Options
	for i := range specs {
		if specs[i].Vendor == name.V {
			spec = &specs[i]
		}
	}
	if spec == nil {
		w.at(name.Pos, stage+".provider", "unknown "+stage+" provider "+showValue(name.V), closestHint(name.V, names))
		// Its options cannot be checked; the stage's own keys still are.
		t.done("key", "", func(k string) bool { return true })
		return p
	}
	for _, e := range t.n.entries {
		if contains(t.known, e.key) {
			continue
		}
		o := optOf(spec, e.key)
		if o == nil {
			continue // reported by done below
		}
		t.known = append(t.known, e.key)
		if opt, ok := w.option(t, e, o, spec); ok {
			p.Options[e.key] = opt
		}
	}
	for _, o := range spec.List {
		t.known = append(t.known, o.Name)
	}
	t.done("option", " for "+spec.Vendor, nil)
	for _, o := range spec.List {
		if _, ok := p.Options[o.Name]; o.Required && !ok && t.n.get(o.Name) == nil {
			w.at(name.Pos, stage+"."+o.Name, "missing: "+spec.Vendor+" needs "+o.Name, "add "+w.format.Setting(o.Name, sample(&o, spec)))
		}
	}
	w.keyVariable(&p, stage, spec, t)
	return p
}

// option decodes one provider option of spec.
func (w *walker) option(t *tbl, e *entry, o *providers.Option, spec *providers.Options) (Option, bool) {
	v, path := e.val, join(t.path, e.key)
	opt := Option{Kind: o.Type, Pos: v.pos}
	f := w.format
	sample := sample(o, spec)
	switch o.Type {
	case providers.TypeString:
		if v.kind == kString {
			opt.String = v.str
			switch {
			case len(o.Enum) > 0 && !contains(o.Enum, v.str):
				w.at(v.pos, path, showValue(v.str)+" is not one of "+strings.Join(o.Enum, ", "), closestHint(v.str, o.Enum))
				return opt, false
			case len(o.Schemes) > 0:
				if msg := providers.CheckURL(v.str, o.Schemes); msg != "" {
					hint := "e.g. " + f.Setting(e.key, sample)
					if strings.Contains(msg, "credentials") {
						hint = "put the key in an environment variable and name it with " + f.Setting("api_key_env", cmp.Or(spec.KeyEnv, "MY_API_KEY"))
					}
					w.at(v.pos, path, msg, hint)
					return opt, false
				}
			case strings.TrimSpace(v.str) == "":
				w.at(v.pos, path, "is empty", "leave the option out for the provider's default")
				return opt, false
			}
			return opt, true
		}
		t.typeErr(e, "a string", sample)
	case providers.TypeEnv:
		if v.kind == kString {
			opt.String = v.str
			if v.str == "" || providers.IsEnvName(v.str) {
				return opt, true
			}
			if looksSecret(v.str) {
				w.at(v.pos, path, "holds what looks like a key itself, not the name of an environment variable (the value is not shown)",
					"put the key in an environment variable and name it here, e.g. "+f.Setting(e.key, sample))
			} else {
				w.at(v.pos, path, "is not an environment variable name (want UPPER_SNAKE_CASE, e.g. OPENAI_API_KEY; the value is not shown)",
					"name the variable in capitals, digits and '_', e.g. "+f.Setting(e.key, sample))
			}
			return opt, false
		}
		t.typeErr(e, "the name of an environment variable", sample)
	case providers.TypeBool:
		if v.kind == kBool {
			opt.Bool = v.b
			return opt, true
		}
		t.typeErr(e, "true or false", true)
	case providers.TypeInt:
		if v.kind == kInt {
			opt.Int = v.i
			if len(o.Values) > 0 && !containsInt(o.Values, v.i) {
				w.at(v.pos, path, fmt.Sprintf("%d is not one of %s", v.i, joinInts(o.Values)), t.optHint(e.key, nearestOf(v.i, o.Values)))
				return opt, false
			}
			if o.Bounded && (float64(v.i) < o.Min || float64(v.i) > o.Max) {
				w.at(v.pos, path, fmt.Sprintf("%d is out of range %s..%s", v.i, fnum(o.Min), fnum(o.Max)), t.optHint(e.key, clampInt(v.i, int64(o.Min), int64(o.Max))))
				return opt, false
			}
			return opt, true
		}
		t.typeErr(e, "an integer", sample)
	case providers.TypeFloat:
		if x, ok := asFloat(v); ok {
			opt.Float = x
			if o.Bounded && !(x >= o.Min && x <= o.Max) {
				w.at(v.pos, path, fmt.Sprintf("%s is out of range %s..%s", fnum(x), fnum(o.Min), fnum(o.Max)), t.optHint(e.key, nearestFloat(x, o.Min, o.Max, o.Min)))
				return opt, false
			}
			return opt, true
		}
		t.typeErr(e, "a number", sample)
	case providers.TypeDuration:
		d, ok := t.parseDuration(e, v, path, o.MinDuration, o.MaxDuration, 0)
		opt.Duration = d
		return opt, ok
	case providers.TypeStrings:
		if v.kind == kArray {
			ok := true
			for i, it := range v.items {
				if it.kind != kString {
					w.at(it.pos, fmt.Sprintf("%s[%d]", path, i), "want a string, got "+it.kind.what(), itemHint(f, e.key, it))
					ok = false
					continue
				}
				opt.Strings = append(opt.Strings, it.str)
			}
			return opt, ok
		}
		t.typeErr(e, "a list of strings", sample)
	case providers.TypeInts:
		if v.kind == kArray {
			ok := true
			for i, it := range v.items {
				ipath := fmt.Sprintf("%s[%d]", path, i)
				switch {
				case it.kind != kInt:
					w.at(it.pos, ipath, "want an integer, got "+it.kind.what(), "write each item as a whole number, e.g. "+f.Setting(e.key, sample))
					ok = false
				case o.Bounded && (float64(it.i) < o.Min || float64(it.i) > o.Max):
					w.at(it.pos, ipath, fmt.Sprintf("%d is out of range %s..%s", it.i, fnum(o.Min), fnum(o.Max)), "each item is within "+fnum(o.Min)+".."+fnum(o.Max)+", e.g. "+f.Setting(e.key, sample))
					ok = false
				default:
					opt.Ints = append(opt.Ints, it.i)
				}
			}
			return opt, ok
		}
		t.typeErr(e, "a list of integers", sample)
	}
	return opt, false
}

// keyVariable fills in the implied key variable and endpoint and checks
// that the variable is set.
func (w *walker) keyVariable(p *Provider, stage string, spec *providers.Options, t *tbl) {
	if spec.Key == providers.NoKey {
		return
	}
	if spec.URLOption != "" {
		if _, ok := p.Options[spec.URLOption]; !ok && t.n.get(spec.URLOption) == nil {
			p.Options[spec.URLOption] = Option{Kind: providers.TypeString, Pos: p.Pos, Implied: true, Value: providers.Value{String: spec.DefaultURL}}
		}
	}
	opt, ok := p.Options["api_key_env"]
	if !ok {
		if t.n.get("api_key_env") != nil {
			return // written, and reported bad
		}
		_, otherURL := p.Options[spec.URLOption]
		otherURL = otherURL && !p.Options[spec.URLOption].Implied
		if spec.Key == providers.KeyUnlessURL && otherURL {
			return // another endpoint: no key unless named
		}
		opt = Option{Kind: providers.TypeEnv, Pos: p.Pos, Implied: true, Value: providers.Value{String: spec.KeyEnv}}
		p.Options["api_key_env"] = opt
	}
	path := stage + ".api_key_env"
	if opt.String == "" {
		if spec.Key == providers.KeyAlways {
			w.at(opt.Pos, path, spec.Vendor+" needs a key: name its variable", w.format.Setting("api_key_env", spec.KeyEnv))
		}
		return
	}
	if v, set := w.opts.LookupEnv(opt.String); !set || v == "" {
		msg := opt.String + " is not set"
		if set {
			msg = opt.String + " is set but empty"
		}
		if opt.Implied {
			msg += " (" + spec.Vendor + "'s key variable by default)"
		}
		w.at(opt.Pos, path, msg, "export "+opt.String+"=... or start from "+w.example())
	}
}
