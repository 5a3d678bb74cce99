//go:build race

package gate

// raceEnabled: the race detector changes allocation counts (sync.Pool
// drops what it holds at random), so the budgets are pinned without it.
const raceEnabled = true
