//go:build !race

package trunk

// raceEnabled: the race detector changes allocation counts, so the
// allocation budgets are pinned without it.
const raceEnabled = false
