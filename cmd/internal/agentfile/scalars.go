package agentfile

import (
	"math"
	"strconv"
	"strings"

	"github.com/brisvox/brisvox/providers"
)

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

// looksSecret tells whether a value may be a key: a vendor key prefix, or
// long and without spaces and not a variable name.
func looksSecret(s string) bool {
	for _, p := range []string{"sk-", "sk_", "AIza", "xai-", "gsk_", "key-", "Bearer "} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return len(s) >= 20 && !strings.ContainsAny(s, " \t\n") && !providers.IsEnvName(s)
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
