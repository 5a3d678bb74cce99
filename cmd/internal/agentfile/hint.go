package agentfile

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/brisvox/brisvox/providers"
)

// closest is the known name nearest to s by edit distance, if near enough
// to be a typo (at most a third of its length, at least 1, at most 3).
func closest(s string, known []string) string {
	best, bestD := "", 0
	limit := min(3, max(1, len(s)/3))
	for _, k := range known {
		d := distance(strings.ToLower(s), strings.ToLower(k))
		if d <= limit && (best == "" || d < bestD) {
			best, bestD = k, d
		}
	}
	return best
}

// closestHint proposes the closest name, or lists them all.
func closestHint(s string, known []string) string {
	if best := closest(s, known); best != "" {
		return fmt.Sprintf("did you mean %q? known: %s", best, listOf(known))
	}
	return "known: " + listOf(known)
}

// listOf joins names with commas, each quoted when one of them is empty
// or not a plain word.
func listOf(names []string) string {
	for _, n := range names {
		if n == "" || !validKey(strings.ToLower(n)) {
			quoted := make([]string, len(names))
			for i, n := range names {
				quoted[i] = strconv.Quote(n)
			}
			return strings.Join(quoted, ", ")
		}
	}
	return strings.Join(names, ", ")
}

// distance is the Levenshtein distance of a and b in bytes (names are
// ASCII); long inputs are capped so a hint never costs much.
func distance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// example is the example agent to start from, in the file's format.
func (w *walker) example() string {
	if w.format == YAML {
		return "examples/agents/local.yaml"
	}
	return "examples/agents/local.toml"
}

// localName is the provider of a stage that needs no key (the local
// agent's), else the first.
func localName(specs []providers.Options) string {
	for _, s := range specs {
		if s.Key == providers.NoKey {
			return s.Vendor
		}
	}
	return specs[0].Vendor
}

// optHint proposes the allowed value nearest to a refused provider
// option.
func (t *tbl) optHint(key string, nearest any) string {
	return "the nearest allowed is " + t.w.format.Setting(key, nearest) + "; leave it out for the provider's default"
}

// itemHint says how to write a list item of the wrong kind: as a string.
func itemHint(f Format, key string, it *node) string {
	text := "..."
	switch it.kind {
	case kInt:
		text = strconv.FormatInt(it.i, 10)
	case kFloat:
		text = fnum(it.f)
	case kBool:
		text = strconv.FormatBool(it.b)
	}
	return "each item is a string, e.g. " + f.Setting(key, []string{text})
}

// sample is a value of the option's kind for a hint: its first allowed
// value, its lower bound, or a placeholder.
func sample(o *providers.Option, spec *providers.Options) any {
	switch o.Type {
	case providers.TypeString:
		switch {
		case len(o.Enum) > 0:
			return o.Enum[0]
		case o.Name == spec.URLOption && spec.DefaultURL != "":
			return spec.DefaultURL
		case len(o.Schemes) > 0:
			return o.Schemes[len(o.Schemes)-1] + "://host.example.net/"
		}
		return "..."
	case providers.TypeEnv:
		if spec.KeyEnv != "" {
			return spec.KeyEnv
		}
		return "MY_API_KEY"
	case providers.TypeBool:
		return true
	case providers.TypeInt:
		if len(o.Values) > 0 {
			return o.Values[0]
		}
		return int64(o.Min)
	case providers.TypeFloat:
		return o.Min
	case providers.TypeDuration:
		return min(max(250*time.Millisecond, o.MinDuration), o.MaxDuration)
	case providers.TypeStrings:
		return []string{"..."}
	case providers.TypeInts:
		return []int64{int64(o.Min)}
	}
	return "..."
}

// clampInt is n within lo..hi.
func clampInt(n, lo, hi int64) int64 { return min(max(n, lo), hi) }

// nearestFloat is f within lo..hi; def for a NaN.
func nearestFloat(f, lo, hi, def float64) float64 {
	if math.IsNaN(f) {
		return def
	}
	return min(max(f, lo), hi)
}

// nearestOf is the value of list nearest to n.
func nearestOf(n int64, list []int64) int64 {
	best := list[0]
	for _, x := range list[1:] {
		if absDiff(x, n) < absDiff(best, n) {
			best = x
		}
	}
	return best
}

func absDiff(a, b int64) uint64 {
	if a > b {
		return uint64(a) - uint64(b)
	}
	return uint64(b) - uint64(a)
}
