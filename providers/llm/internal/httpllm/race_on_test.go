//go:build race

package httpllm

// raceEnabled: the race detector changes allocation counts, so the
// allocation budget is pinned without it.
const raceEnabled = true
