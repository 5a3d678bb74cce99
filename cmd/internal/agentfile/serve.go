package agentfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/brisvox/brisvox/cmd/internal/admit"
)

// Bounds of [serve].
const (
	minMemoryLimit = 16 << 20
	maxMemoryLimit = 1 << 50
)

// serve reads [serve].
func (w *walker) serve(t *tbl) Serve {
	s := Serve{Pos: t.pos}
	s.RateLimit = w.rate(t, "rate_limit", 5, 100_000)
	s.Burst = t.integer("burst", 20, 1, 1_000_000)
	s.OverCapacity = t.boolean("over_capacity", false)
	s.MemoryLimit = w.memoryLimit(t)
	s.GCPercent = t.integer("gc_percent", 100, -1, 1000)
	if g := s.GCPercent; g.Set && g.V >= 0 && g.V < 10 {
		w.at(g.Pos, "serve.gc_percent", fmt.Sprintf("%d is under 10: the collector would run all the time", g.V),
			w.format.Setting("gc_percent", -1)+" turns the collector off (with memory_limit), or e.g. "+w.format.Setting("gc_percent", 100))
		s.GCPercent.V, s.GCPercent.Set = 100, false
	}
	if g := s.GCPercent; g.Set && g.V == -1 && s.MemoryLimit.V == 0 {
		if v, ok := w.opts.LookupEnv("GOMEMLIMIT"); !ok || v == "" || v == "off" {
			w.at(g.Pos, "serve.gc_percent", "-1 turns the collector off, and no memory limit would ever run it",
				"add "+w.format.Setting("memory_limit", "512MiB")+" (or set GOMEMLIMIT), or leave gc_percent out")
		}
	}
	s.Admission = t.oneOf("admission", "fixed", "fixed", "measured")
	s.CPUCeiling = w.share(t, "cpu_ceiling", admit.DefaultCeiling)
	t.done("key", "", nil)
	return s
}

// share reads a share of a whole: more than 0, at most 1.
func (w *walker) share(t *tbl, key string, def float64) Value[float64] {
	e := t.take(key)
	if e == nil {
		return Value[float64]{V: def, Pos: t.pos}
	}
	f, ok := asFloat(e.val)
	if !ok {
		t.typeErr(e, "a number", def)
		return Value[float64]{V: def, Pos: e.val.pos}
	}
	if !(f > 0 && f <= 1) {
		w.at(e.val.pos, join(t.path, key), fmt.Sprintf("%s is out of range: want a share of the cores, more than 0, at most 1", fnum(f)),
			fmt.Sprintf("e.g. %s (the default: %.0f%% of the cores)", w.format.Setting(key, def), def*100))
		return Value[float64]{V: def, Pos: e.val.pos}
	}
	return Value[float64]{V: f, Pos: e.val.pos, Set: true}
}

// rate reads a number of events a second: more than 0, at most hi.
func (w *walker) rate(t *tbl, key string, def, hi float64) Value[float64] {
	e := t.take(key)
	if e == nil {
		return Value[float64]{V: def, Pos: t.pos}
	}
	f, ok := asFloat(e.val)
	if !ok {
		t.typeErr(e, "a number", def)
		return Value[float64]{V: def, Pos: e.val.pos}
	}
	if !(f > 0 && f <= hi) {
		w.at(e.val.pos, join(t.path, key), fmt.Sprintf("%s is out of range: want more than 0, at most %s a second", fnum(f), fnum(hi)),
			"e.g. "+w.format.Setting(key, def)+" (the default)")
		return Value[float64]{V: def, Pos: e.val.pos}
	}
	return Value[float64]{V: f, Pos: e.val.pos, Set: true}
}

// memoryLimit reads serve.memory_limit: a size with a unit, or 0.
func (w *walker) memoryLimit(t *tbl) Value[int64] {
	e := t.take("memory_limit")
	if e == nil {
		return Value[int64]{Pos: t.pos}
	}
	v, path := e.val, "serve.memory_limit"
	out := Value[int64]{Pos: v.pos}
	sample := w.format.Setting("memory_limit", "512MiB")
	var n int64
	switch {
	case v.kind == kInt && v.i == 0:
	case v.kind == kInt:
		w.at(v.pos, path, "a size needs a unit", "e.g. "+sample+" or "+w.format.Setting("memory_limit", "2GiB")+" (B, KB, MB, GB, KiB, MiB, GiB)")
		return out
	case v.kind == kString:
		var err error
		if n, err = ParseSize(v.str); err != nil {
			w.at(v.pos, path, showValue(v.str)+" is not a size: "+strings.TrimPrefix(err.Error(), ErrSize.Error()+": "), "a whole number and a unit (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB), e.g. "+sample)
			return out
		}
	default:
		t.typeErr(e, "a size", "512MiB")
		return out
	}
	if n != 0 && (n < minMemoryLimit || n > maxMemoryLimit) {
		w.at(v.pos, path, fmt.Sprintf("%d bytes is out of range 16MiB..1PiB", n), "e.g. "+sample+"; 0 or no memory_limit sets none")
		return out
	}
	out.V, out.Set = n, true
	return out
}

// sizeUnits are the units of a size, by their lower-cased name.
var sizeUnits = map[string]int64{
	"b": 1, "": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

// ParseSize reads a size in bytes: a whole number and a unit, decimal
// (KB, MB, GB, TB) or binary (KiB, MiB, GiB, TiB), in any case, with an
// optional space ("512MiB", "2 GiB", "1500MB"); a bare number is bytes.
func ParseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: no number", ErrSize)
	}
	unit := strings.ToLower(strings.TrimSpace(s[i:]))
	mult, ok := sizeUnits[unit]
	if !ok {
		if strings.HasPrefix(unit, ".") {
			return 0, fmt.Errorf("%w: a whole number is needed (write 1536MiB, not 1.5GiB)", ErrSize)
		}
		return 0, fmt.Errorf("%w: unknown unit", ErrSize)
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%w: too large", ErrSize)
	}
	return n * mult, nil
}
