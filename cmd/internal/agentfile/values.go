package agentfile

import (
	"fmt"
	"strings"
	"time"
)

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
