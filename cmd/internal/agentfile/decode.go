package agentfile

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// walker decodes the tree into a File, collecting diagnostics.
type walker struct {
	name string
	opts Options
	// format is the file's: hints show settings in its syntax.
	format Format
	diags  Diagnostics
	// partial: the tree ends at a syntax error, so what is missing may
	// only be unread; "missing" diagnostics are left out.
	partial bool
}

// at records a diagnostic.
func (w *walker) at(pos Pos, path, msg, hint string) {
	w.diags = append(w.diags, Diagnostic{File: w.name, Line: pos.Line, Col: pos.Col, Path: path, Msg: msg, Hint: hint})
}

// missing records a diagnostic for something required and absent, unless
// the file could not be read to its end.
func (w *walker) missing(pos Pos, path, msg, hint string) {
	if !w.partial {
		w.at(pos, path, msg, hint)
	}
}

// tbl reads one table of the tree; the keys asked for are its known ones.
type tbl struct {
	w     *walker
	n     *node // nil when the table is absent
	path  string
	pos   Pos // the table's place; its parent's when absent
	known []string
	// wrong: the key holds something other than a table (reported).
	wrong bool
}

// present tells whether the file has the table.
func (t *tbl) present() bool { return t.n != nil }

// take marks key known and returns its entry, or nil.
func (t *tbl) take(key string) *entry {
	t.known = append(t.known, key)
	if t.n == nil {
		return nil
	}
	return t.n.get(key)
}

// sub reads the table under key.
func (t *tbl) sub(key string) *tbl {
	path := join(t.path, key)
	e := t.take(key)
	if e == nil {
		return &tbl{w: t.w, path: path, pos: t.pos}
	}
	if e.val.kind != kTable {
		t.w.at(e.val.pos, path, "want a table, got "+e.val.kind.what(), "write it as a table, e.g. "+t.w.format.Table(path))
		return &tbl{w: t.w, path: path, pos: e.keyPos, wrong: true}
	}
	return &tbl{w: t.w, n: e.val, path: path, pos: e.keyPos}
}

// done reports the keys nobody asked for, except those skip tells.
// noun names them ("key", "option"), of says whose ("for openai").
func (t *tbl) done(noun, of string, skip func(string) bool) {
	if t.n == nil {
		return
	}
	for _, e := range t.n.entries {
		if contains(t.known, e.key) || (skip != nil && skip(e.key)) {
			continue
		}
		t.w.at(e.keyPos, join(t.path, e.key), fmt.Sprintf("unknown %s %q%s", noun, e.key, of), unknownHint(e.key, t.known))
	}
}

// unknownHint proposes the closest known name, or lists them.
func unknownHint(key string, known []string) string {
	if best := closest(key, known); best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	h := "known: " + strings.Join(dedup(known), ", ")
	if k := strings.ToLower(key); strings.Contains(k, "key") || strings.Contains(k, "token") || strings.Contains(k, "secret") || strings.Contains(k, "password") {
		h = "a key is never written in an agent file: put it in an environment variable and name the variable with api_key_env; " + h
	}
	return h
}

// typeErr reports a value of the wrong kind; sample is a value of the
// right one, shown in the hint as the file would write it.
func (t *tbl) typeErr(e *entry, want string, sample any) {
	f := t.w.format
	hint := "write it as " + f.Setting(e.key, sample)
	if d, ok := sample.(time.Duration); ok {
		want = `a duration such as "250ms"`
		if e.val.kind == kInt && e.val.i > 0 && e.val.i < 1e9 {
			d = time.Duration(e.val.i) * time.Millisecond
		}
		if d <= 0 {
			d = 250 * time.Millisecond
		}
		hint = "a duration is a number with a unit, e.g. " + f.Setting(e.key, d)
		if f == TOML {
			hint += " (a string, in quotes)"
		}
	}
	t.w.at(e.val.pos, join(t.path, e.key), "want "+want+", got "+e.val.kind.what(), hint)
}

// rangeHint proposes the allowed value nearest to a refused one.
func (t *tbl) rangeHint(key string, nearest any) string {
	return "the nearest allowed is " + t.w.format.Setting(key, nearest) + "; leave it out for the default"
}

// str reads a string.
func (t *tbl) str(key, def string) Value[string] {
	e := t.take(key)
	if e == nil {
		return Value[string]{V: def, Pos: t.pos}
	}
	if e.val.kind != kString {
		sample := def
		if sample == "" {
			sample = "..."
		}
		t.typeErr(e, "a string", sample)
		return Value[string]{V: def, Pos: e.val.pos}
	}
	return Value[string]{V: e.val.str, Pos: e.val.pos, Set: true}
}

// boolean reads a boolean.
func (t *tbl) boolean(key string, def bool) Value[bool] {
	e := t.take(key)
	if e == nil {
		return Value[bool]{V: def, Pos: t.pos}
	}
	if e.val.kind != kBool {
		t.typeErr(e, "true or false", true)
		return Value[bool]{V: def, Pos: e.val.pos}
	}
	return Value[bool]{V: e.val.b, Pos: e.val.pos, Set: true}
}

// number reads an integer or a number within lo..hi.
func (t *tbl) number(key string, def, lo, hi float64) Value[float64] {
	e := t.take(key)
	if e == nil {
		return Value[float64]{V: def, Pos: t.pos}
	}
	f, ok := asFloat(e.val)
	if !ok {
		t.typeErr(e, "a number", def)
		return Value[float64]{V: def, Pos: e.val.pos}
	}
	if !(f >= lo && f <= hi) {
		t.w.at(e.val.pos, join(t.path, e.key), fmt.Sprintf("%s is out of range %s..%s", fnum(f), fnum(lo), fnum(hi)), t.rangeHint(key, nearestFloat(f, lo, hi, def)))
		return Value[float64]{V: def, Pos: e.val.pos}
	}
	return Value[float64]{V: f, Pos: e.val.pos, Set: true}
}

// integer reads an integer within lo..hi.
func (t *tbl) integer(key string, def, lo, hi int) Value[int] {
	e := t.take(key)
	if e == nil {
		return Value[int]{V: def, Pos: t.pos}
	}
	if e.val.kind != kInt {
		t.typeErr(e, "an integer", def)
		return Value[int]{V: def, Pos: e.val.pos}
	}
	if e.val.i < int64(lo) || e.val.i > int64(hi) {
		t.w.at(e.val.pos, join(t.path, e.key), fmt.Sprintf("%d is out of range %d..%d", e.val.i, lo, hi), t.rangeHint(key, int(clampInt(e.val.i, int64(lo), int64(hi)))))
		return Value[int]{V: def, Pos: e.val.pos}
	}
	return Value[int]{V: int(e.val.i), Pos: e.val.pos, Set: true}
}

// duration reads a duration string within lo..hi.
func (t *tbl) duration(key string, def, lo, hi time.Duration) Value[time.Duration] {
	e := t.take(key)
	if e == nil {
		return Value[time.Duration]{V: def, Pos: t.pos}
	}
	d, ok := t.parseDuration(e, e.val, join(t.path, e.key), lo, hi, def)
	if !ok {
		return Value[time.Duration]{V: def, Pos: e.val.pos}
	}
	return Value[time.Duration]{V: d, Pos: e.val.pos, Set: true}
}

// parseDuration checks a duration value; def is the setting's default
// (shown in hints when in range).
func (t *tbl) parseDuration(e *entry, v *node, path string, lo, hi, def time.Duration) (time.Duration, bool) {
	sample := def
	if sample <= lo || sample > hi {
		sample = min(max(250*time.Millisecond, lo), hi)
	}
	if v.kind != kString {
		t.typeErr(e, "a duration", sample)
		return 0, false
	}
	f := t.w.format
	d, err := time.ParseDuration(v.str)
	if err != nil {
		t.w.at(v.pos, path, showValue(v.str)+" is not a duration", "a number and a unit (ms, s, m, h), e.g. "+f.Setting(e.key, sample))
		return 0, false
	}
	if d < lo || d > hi {
		hint := t.rangeHint(e.key, min(max(d, lo), hi))
		if d < 0 {
			hint = "a duration is never negative; e.g. " + f.Setting(e.key, sample) + ", or leave it out for the default"
		}
		t.w.at(v.pos, path, fmt.Sprintf("%v is out of range %v..%v", d, lo, hi), hint)
		return 0, false
	}
	return d, true
}

// list reads a list of strings; each item is checked by check (nil: any
// non-empty string), which returns a message and a hint for a bad one.
func (t *tbl) list(key string, check func(string) (msg, hint string)) []Value[string] {
	e := t.take(key)
	if e == nil {
		return nil
	}
	if e.val.kind != kArray {
		t.typeErr(e, "a list of strings", []string{"..."})
		return nil
	}
	var out []Value[string]
	for i, it := range e.val.items {
		path := fmt.Sprintf("%s[%d]", join(t.path, key), i)
		if it.kind != kString {
			t.w.at(it.pos, path, "want a string, got "+it.kind.what(), itemHint(t.w.format, key, it))
			continue
		}
		if strings.TrimSpace(it.str) == "" {
			t.w.at(it.pos, path, "is empty", "remove the empty item")
			continue
		}
		if check != nil {
			if msg, hint := check(it.str); msg != "" {
				t.w.at(it.pos, path, msg, hint)
				continue
			}
		}
		out = append(out, Value[string]{V: it.str, Pos: it.pos, Set: true})
	}
	return out
}

// oneOf reads a string that must be one of vals.
func (t *tbl) oneOf(key, def string, vals ...string) Value[string] {
	v := t.str(key, def)
	if v.Set && !contains(vals, v.V) {
		t.w.at(v.Pos, join(t.path, key), showValue(v.V)+" is not one of "+listOf(vals), closestHint(v.V, vals))
		v.V, v.Set = def, false
	}
	return v
}

// decode turns the tree into a File.
func (w *walker) decode(root *node, complete bool) *File {
	w.partial = !complete
	f := &File{Path: w.name}
	top := &tbl{w: w, n: root, pos: Pos{1, 1}}

	base := strings.TrimSuffix(filepath.Base(w.name), filepath.Ext(w.name))
	f.Name = top.str("name", base)
	if f.Name.Set && !validName(f.Name.V) {
		w.at(f.Name.Pos, "name", "want 1 to 64 letters, digits, '.', '_' or '-'", "e.g. "+w.format.Setting("name", "front-desk"))
	}
	f.Prompt = top.str("prompt", "")
	switch {
	case f.Prompt.Set && strings.TrimSpace(f.Prompt.V) == "":
		w.at(f.Prompt.Pos, "prompt", "is empty", "say who the agent is and what it does")
	case !f.Prompt.Set && top.take("prompt") == nil:
		w.missing(Pos{1, 1}, "prompt", "missing: every agent needs a prompt", w.format.Setting("prompt", "You are the phone assistant of ..."))
	}
	f.Greeting = top.str("greeting", "")
	f.EndLine = top.str("end_line", "")

	stt := top.sub("stt")
	sttWarm := w.warmOf(stt, "stt")
	f.STT = w.provider(stt, "stt", sttProviders)
	f.STTWarm = sttWarm.check(f.STT, sttProviders)
	llm := top.sub("llm")
	llmWarm := w.warmOf(llm, "llm")
	f.Rounds = Rounds{
		MaxRounds:    llm.integer("max_rounds", 6, 1, 20),
		RoundTimeout: llm.duration("round_timeout", 15*time.Second, time.Second, 2*time.Minute),
		WindowTokens: llm.integer("window_tokens", 0, -1, 2_000_000),
		FallbackLine: llm.str("fallback_line", ""),
	}
	if v := f.Rounds.WindowTokens; v.Set && v.V >= 0 && v.V < 1000 {
		w.at(v.Pos, "llm.window_tokens", fmt.Sprintf("%d is under 1000", v.V), w.format.Setting("window_tokens", -1)+" turns the window off; leave it out for the default")
	}
	f.LLM = w.provider(llm, "llm", llmProviders)
	f.LLMWarm = llmWarm.check(f.LLM, llmProviders)
	tts := top.sub("tts")
	ttsWarm := w.warmOf(tts, "tts")
	f.TTS = w.provider(tts, "tts", ttsProviders)
	f.TTSWarm = ttsWarm.check(f.TTS, ttsProviders)

	f.VAD = w.vad(top.sub("vad"))
	f.Turn = w.turn(top.sub("turn"))
	f.Fillers = w.fillers(top.sub("fillers"))
	f.Tools = w.tools(top.sub("tools"))
	f.DTMF = w.dtmf(top.sub("dtmf"))
	f.Transports = w.transports(top.sub("transports"))
	f.Serve = w.serve(top.sub("serve"))
	top.done("key", "", nil)

	w.eightKHz(f)
	return f
}

// provider reads the provider of a stage's table t; the keys t knows
// already are the stage's own.
func (w *walker) provider(t *tbl, stage string, specs []provSpec) Provider {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
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
	var spec *provSpec
	for i := range specs {
		if specs[i].name == name.V {
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
		o := spec.opt(e.key)
		if o == nil {
			continue // reported by done below
		}
		t.known = append(t.known, e.key)
		if opt, ok := w.option(t, e, o, spec); ok {
			p.Options[e.key] = opt
		}
	}
	for _, o := range spec.opts {
		t.known = append(t.known, o.name)
	}
	t.done("option", " for "+spec.name, nil)
	for _, o := range spec.opts {
		if _, ok := p.Options[o.name]; o.required && !ok && t.n.get(o.name) == nil {
			w.at(name.Pos, stage+"."+o.name, "missing: "+spec.name+" needs "+o.name, "add "+w.format.Setting(o.name, o.sample(spec)))
		}
	}
	w.keyVariable(&p, stage, spec, t)
	return p
}

// option decodes one provider option of spec.
func (w *walker) option(t *tbl, e *entry, o *optSpec, spec *provSpec) (Option, bool) {
	v, path := e.val, join(t.path, e.key)
	opt := Option{Kind: o.kind, Pos: v.pos}
	f := w.format
	sample := o.sample(spec)
	switch o.kind {
	case KindString:
		if v.kind == kString {
			opt.String = v.str
			switch {
			case len(o.oneOf) > 0 && !contains(o.oneOf, v.str):
				w.at(v.pos, path, showValue(v.str)+" is not one of "+strings.Join(o.oneOf, ", "), closestHint(v.str, o.oneOf))
				return opt, false
			case len(o.schemes) > 0:
				if msg := checkURL(v.str, o.schemes); msg != "" {
					hint := "e.g. " + f.Setting(e.key, sample)
					if strings.Contains(msg, "credentials") {
						hint = "put the key in an environment variable and name it with " + f.Setting("api_key_env", cmp.Or(spec.keyEnv, "MY_API_KEY"))
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
	case KindEnv:
		if v.kind == kString {
			opt.String = v.str
			if v.str == "" || isEnvName(v.str) {
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
	case KindBool:
		if v.kind == kBool {
			opt.Bool = v.b
			return opt, true
		}
		t.typeErr(e, "true or false", true)
	case KindInt:
		if v.kind == kInt {
			opt.Int = v.i
			if len(o.ints) > 0 && !containsInt(o.ints, v.i) {
				w.at(v.pos, path, fmt.Sprintf("%d is not one of %s", v.i, joinInts(o.ints)), t.optHint(e.key, nearestOf(v.i, o.ints)))
				return opt, false
			}
			if o.ranged && (float64(v.i) < o.lo || float64(v.i) > o.hi) {
				w.at(v.pos, path, fmt.Sprintf("%d is out of range %s..%s", v.i, fnum(o.lo), fnum(o.hi)), t.optHint(e.key, clampInt(v.i, int64(o.lo), int64(o.hi))))
				return opt, false
			}
			return opt, true
		}
		t.typeErr(e, "an integer", sample)
	case KindFloat:
		if x, ok := asFloat(v); ok {
			opt.Float = x
			if o.ranged && !(x >= o.lo && x <= o.hi) {
				w.at(v.pos, path, fmt.Sprintf("%s is out of range %s..%s", fnum(x), fnum(o.lo), fnum(o.hi)), t.optHint(e.key, nearestFloat(x, o.lo, o.hi, o.lo)))
				return opt, false
			}
			return opt, true
		}
		t.typeErr(e, "a number", sample)
	case KindDuration:
		d, ok := t.parseDuration(e, v, path, o.dlo, o.dhi, 0)
		opt.Duration = d
		return opt, ok
	case KindStrings:
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
	case KindInts:
		if v.kind == kArray {
			ok := true
			for i, it := range v.items {
				ipath := fmt.Sprintf("%s[%d]", path, i)
				switch {
				case it.kind != kInt:
					w.at(it.pos, ipath, "want an integer, got "+it.kind.what(), "write each item as a whole number, e.g. "+f.Setting(e.key, sample))
					ok = false
				case o.ranged && (float64(it.i) < o.lo || float64(it.i) > o.hi):
					w.at(it.pos, ipath, fmt.Sprintf("%d is out of range %s..%s", it.i, fnum(o.lo), fnum(o.hi)), "each item is within "+fnum(o.lo)+".."+fnum(o.hi)+", e.g. "+f.Setting(e.key, sample))
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
func (w *walker) keyVariable(p *Provider, stage string, spec *provSpec, t *tbl) {
	if spec.keys == noKey {
		return
	}
	if spec.urlOpt != "" {
		if _, ok := p.Options[spec.urlOpt]; !ok && t.n.get(spec.urlOpt) == nil {
			p.Options[spec.urlOpt] = Option{Kind: KindString, Pos: p.Pos, Implied: true, String: spec.defURL}
		}
	}
	opt, ok := p.Options["api_key_env"]
	if !ok {
		if t.n.get("api_key_env") != nil {
			return // written, and reported bad
		}
		_, otherURL := p.Options[spec.urlOpt]
		otherURL = otherURL && !p.Options[spec.urlOpt].Implied
		if spec.keys == keyUnlessURL && otherURL {
			return // another endpoint: no key unless named
		}
		opt = Option{Kind: KindEnv, Pos: p.Pos, Implied: true, String: spec.keyEnv}
		p.Options["api_key_env"] = opt
	}
	path := stage + ".api_key_env"
	if opt.String == "" {
		if spec.keys == keyAlways {
			w.at(opt.Pos, path, spec.name+" needs a key: name its variable", w.format.Setting("api_key_env", spec.keyEnv))
		}
		return
	}
	if v, set := w.opts.LookupEnv(opt.String); !set || v == "" {
		msg := opt.String + " is not set"
		if set {
			msg = opt.String + " is set but empty"
		}
		if opt.Implied {
			msg += " (" + spec.name + "'s key variable by default)"
		}
		w.at(opt.Pos, path, msg, "export "+opt.String+"=... or start from "+w.example())
	}
}

// vad reads [vad].
func (w *walker) vad(t *tbl) VAD {
	v := VAD{Pos: t.pos}
	v.Engine = t.oneOf("engine", "energy", "silero", "energy")
	siler := []string{"stop_threshold", "min_speech", "hangover"}
	energy := []string{"start_after", "stop_after"}
	other, otherName := energy, "energy"
	if v.Engine.V == "silero" {
		v.Silero.Threshold = t.number("threshold", 0.5, 0, 1)
		stopDef := v.Silero.Threshold.V - 0.15
		if stopDef <= 0 {
			stopDef = v.Silero.Threshold.V / 2
		}
		v.Silero.StopThreshold = t.number("stop_threshold", stopDef, 0, 1)
		if st := v.Silero.StopThreshold; st.Set && st.V > v.Silero.Threshold.V {
			w.at(st.Pos, "vad.stop_threshold", fmt.Sprintf("%s is above threshold %s", fnum(st.V), fnum(v.Silero.Threshold.V)),
				"the stop threshold is the lower one (hysteresis)")
		}
		v.Silero.MinSpeech = t.duration("min_speech", 64*time.Millisecond, 0, 2*time.Second)
		v.Silero.Hangover = t.duration("hangover", 300*time.Millisecond, 0, 5*time.Second)
	} else {
		v.Energy.Threshold = t.number("threshold", 500, 1, 32767)
		v.Energy.StartAfter = t.duration("start_after", 40*time.Millisecond, 0, 2*time.Second)
		v.Energy.StopAfter = t.duration("stop_after", 300*time.Millisecond, 0, 5*time.Second)
		other, otherName = siler, "silero"
	}
	for _, k := range other {
		if e := t.take(k); e != nil {
			w.at(e.keyPos, join(t.path, k), fmt.Sprintf("%s is a setting of the %s engine; engine is %s", k, otherName, v.Engine.V),
				"set "+w.format.Setting("engine", otherName)+" or remove "+k)
		}
	}
	t.done("key", "", nil)
	return v
}

// turn reads [turn].
func (w *walker) turn(t *tbl) Turn {
	tu := Turn{Pos: t.pos}
	tu.EndOfTurnDelay = t.duration("end_of_turn_delay", 0, 0, 5*time.Second)
	tu.BargeInDelay = t.duration("barge_in_delay", 0, 0, 2*time.Second)
	tu.Speculate = t.boolean("speculate", false)
	tu.DrainTimeout = t.duration("drain_timeout", 15*time.Second, 0, time.Minute)
	if tu.Speculate.V && tu.EndOfTurnDelay.V == 0 {
		w.at(tu.Speculate.Pos, "turn.speculate", "speculation needs an end-of-turn delay to hide the request in",
			"set "+w.format.Setting("end_of_turn_delay", 300*time.Millisecond)+", or remove speculate")
	}
	t.done("key", "", nil)
	return tu
}

// fillers reads [fillers].
func (w *walker) fillers(t *tbl) Fillers {
	f := Fillers{Pos: t.pos, After: Value[time.Duration]{V: 1200 * time.Millisecond, Pos: t.pos}}
	if e := t.take("after"); e != nil {
		if e.val.kind == kString && e.val.str == "off" {
			f.After = Value[time.Duration]{V: -1, Pos: e.val.pos, Set: true}
		} else if d, ok := t.parseDuration(e, e.val, "fillers.after", 0, 10*time.Second, 1200*time.Millisecond); ok {
			f.After = Value[time.Duration]{V: d, Pos: e.val.pos, Set: true}
		} else {
			f.After.Pos = e.val.pos
		}
	}
	f.PerTool = t.boolean("per_tool", false)
	if f.PerTool.V && t.n != nil && t.n.get("after") != nil {
		w.at(f.PerTool.Pos, "fillers.per_tool", "per_tool and after together: one of them would be ignored",
			"remove after to use each tool's own delay, or per_tool for one delay")
	}
	f.Phrases = t.list("phrases", nil)
	t.done("key", "", nil)
	return f
}

// tools reads [tools].
func (w *walker) tools(t *tbl) Tools {
	known := w.opts.KnownTools
	tl := Tools{Pos: t.pos}
	seen := map[string]Pos{}
	tl.Enabled = t.list("enabled", func(s string) (string, string) {
		if p, dup := seen[s]; dup {
			return s + " is listed twice (first at " + p.String() + ")", "remove the second one"
		}
		seen[s] = Pos{}
		if known != nil && !contains(known, s) {
			return "unknown tool " + showValue(s), closestHint(s, known)
		}
		return "", ""
	})
	for _, e := range tl.Enabled {
		seen[e.V] = e.Pos
	}
	confirmed := map[string]bool{}
	tl.Confirm = t.list("confirm", func(s string) (string, string) {
		if confirmed[s] {
			return s + " is listed twice", "remove the second one"
		}
		confirmed[s] = true
		if _, ok := seen[s]; !ok {
			return s + " is in confirm but not enabled", "add it to tools.enabled, or remove it from tools.confirm"
		}
		return "", ""
	})
	t.done("key", "", nil)
	return tl
}

// transports reads [transports].
func (w *walker) transports(t *tbl) Transports {
	tr := Transports{Pos: t.pos}
	wt := t.sub("webrtc")
	tr.WebRTC = WebRTC{
		Pos:             wt.pos,
		Enabled:         wt.boolean("enabled", wt.present()),
		IncludeLoopback: wt.boolean("include_loopback", false),
		Interfaces:      wt.list("interfaces", nil),
		STUN: wt.list("stun", func(s string) (string, string) {
			if !strings.HasPrefix(s, "stun:") && !strings.HasPrefix(s, "stuns:") {
				return showValue(s) + " is not a stun: URL", "e.g. " + w.format.Setting("stun", []string{"stun:stun.example.net:3478"})
			}
			return "", ""
		}),
	}
	tr.WebRTC.Access = w.access(wt, tr.WebRTC.Enabled.V)
	wt.done("key", "", nil)
	tw := t.sub("twilio")
	tr.Twilio = Twilio{Pos: tw.pos, Enabled: tw.boolean("enabled", tw.present()), Path: w.path(tw, "/twilio")}
	w.twilioAccess(tw, &tr.Twilio)
	tw.done("key", "", nil)
	pc := t.sub("pcm")
	tr.PCM = PCM{Pos: pc.pos, Enabled: pc.boolean("enabled", pc.present()), Path: w.path(pc, "/pcm")}
	tr.PCM.Rate = pc.integer("rate", 16000, 0, math.MaxInt32)
	if r := tr.PCM.Rate; r.Set && !containsInt([]int64{8000, 16000, 24000, 48000}, int64(r.V)) {
		w.at(r.Pos, "transports.pcm.rate", fmt.Sprintf("%d is not one of 8000, 16000, 24000, 48000", r.V), "e.g. "+w.format.Setting("rate", 16000))
		tr.PCM.Rate.V, tr.PCM.Rate.Set = 16000, false
	}
	tr.PCM.Access = w.access(pc, tr.PCM.Enabled.V)
	pc.done("key", "", nil)
	tr.SIP = w.sip(t.sub("sip"))
	t.done("key", "", nil)
	if tr.Twilio.Enabled.V && tr.PCM.Enabled.V && tr.Twilio.Path.V == tr.PCM.Path.V {
		w.at(tr.PCM.Path.Pos, "transports.pcm.path", "the same path as transports.twilio.path", "give each transport its own path")
	}
	if !tr.WebRTC.Enabled.V && !tr.Twilio.Enabled.V && !tr.PCM.Enabled.V && !tr.SIP.Enabled.V {
		w.missing(t.pos, "transports", "no transport is enabled: nobody could call the agent",
			"enable one, e.g. "+w.format.Table("transports.webrtc")+" (or twilio, pcm, sip)")
	}
	return tr
}

// path reads a transport's HTTP path.
func (w *walker) path(t *tbl, def string) Value[string] {
	v := t.str("path", def)
	if v.Set && (!strings.HasPrefix(v.V, "/") || strings.ContainsAny(v.V, " ?#\t\r\n")) {
		w.at(v.Pos, join(t.path, "path"), "want an absolute path such as "+def, "e.g. "+w.format.Setting("path", def))
		v.V, v.Set = def, false
	}
	return v
}

// eightKHz refuses pocketsphinx on a telephony transport: it hears 16 kHz
// wideband audio only, and a phone line brings 8 kHz.
func (w *walker) eightKHz(f *File) {
	if f.STT.Name != "pocketsphinx" {
		return
	}
	const msg = "pocketsphinx hears 16 kHz audio only; a telephony transport brings 8 kHz"
	const hint = "use deepgram for telephony or turn the transport off"
	if tw := f.Transports.Twilio; tw.Enabled.V {
		pos := tw.Enabled.Pos
		if !tw.Enabled.Set {
			pos = tw.Pos
		}
		w.at(pos, "transports.twilio", msg, hint)
	}
	if pc := f.Transports.PCM; pc.Enabled.V && pc.Rate.V == 8000 {
		w.at(pc.Rate.Pos, "transports.pcm.rate", msg, hint+" (or "+w.format.Setting("rate", 16000)+")")
	}
	if s := f.Transports.SIP; s.Enabled.V {
		if s.Rate.V == 8000 {
			w.at(s.Rate.Pos, "transports.sip.rate", "pocketsphinx hears 16 kHz audio only", w.format.Setting("rate", 16000)+" (with the wideband codecs opus and G722)")
		}
		if narrow := narrowCodecs(s); len(narrow) > 0 {
			pos := s.Pos
			if len(s.Codecs) > 0 {
				pos = s.Codecs[0].Pos
			}
			w.at(pos, "transports.sip.codecs", "pocketsphinx cannot serve "+strings.Join(narrow, " and ")+" (8 kHz phone audio): measured over four voices, the keyless agent answers 36 of 52 turns right through G.711 against 46 at 16 kHz (32% word errors against 10%; \"what time is it\" misheard on every voice, docs/MEDIA.md)",
				w.format.Setting("codecs", []string{"opus", "G722"})+" (a caller offering only G.711 is answered 488 with the wideband codecs named), or use deepgram for 8 kHz calls")
		}
	}
}

// validName tells whether an agent name is usable in logs and paths.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// isEnvName tells whether s is an UPPER_SNAKE_CASE variable name.
func isEnvName(s string) bool {
	if s == "" || len(s) > 128 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// looksSecret tells whether a value may be a key: a vendor key prefix, or
// long and without spaces and not a variable name.
func looksSecret(s string) bool {
	for _, p := range []string{"sk-", "sk_", "AIza", "xai-", "gsk_", "key-", "Bearer "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return len(s) >= 20 && !strings.ContainsAny(s, " \t\n") && !isEnvName(s)
}

// showValue quotes a value for a message, never a key-like one, and at
// most 40 characters.
func showValue(s string) string {
	if looksSecret(s) && !strings.ContainsAny(s, "/:.") {
		return "(a value that looks like a key, not shown)"
	}
	if r := []rune(s); len(r) > 40 {
		s = string(r[:37]) + "..."
	}
	return strconv.Quote(s)
}

// checkURL checks an endpoint: one of schemes, a host, no credentials,
// query or fragment. It returns a message, or "" when it is fine.
func checkURL(s string, schemes []string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	host, _, _ := strings.Cut(rest, "/")
	switch {
	case !ok || !contains(schemes, scheme):
		return "want a " + strings.Join(schemes, " or ") + " URL"
	case host == "" || strings.ContainsAny(host, " \t"):
		return "the URL has no host"
	case strings.Contains(host, "@"):
		return "the URL carries credentials (the value is not shown): name a key variable with api_key_env instead"
	case strings.ContainsAny(rest, "?#"):
		return "the URL must carry no query or fragment"
	}
	return ""
}

// asFloat reads an integer or float node.
func asFloat(n *node) (float64, bool) {
	switch n.kind {
	case kInt:
		return float64(n.i), true
	case kFloat:
		return n.f, true
	}
	return 0, false
}

// fnum formats a number as written: whole numbers without an exponent.
func fnum(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsInt(list []int64, n int64) bool {
	for _, x := range list {
		if x == n {
			return true
		}
	}
	return false
}

func joinInts(list []int64) string {
	s := make([]string, len(list))
	for i, n := range list {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, ", ")
}

func dedup(list []string) []string {
	var out []string
	for _, s := range list {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
