package agentfile

import (
	"fmt"
	"strings"
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
		return fmt.Sprintf("did you mean %q? known: %s", best, strings.Join(known, ", "))
	}
	return "known: " + strings.Join(known, ", ")
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
