//go:build race

package cartesia

// raceEnabled: the race detector changes allocation counts, so the
// allocation budgets are pinned without it.
const raceEnabled = true
