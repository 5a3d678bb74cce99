//go:build !race

package providertest

// raceEnabled: the race detector changes allocation counts, so the
// allocation budgets are pinned without it.
const raceEnabled = false
