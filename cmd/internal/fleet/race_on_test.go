//go:build race

package fleet

// raceEnabled: the tests that run several nodes in one process are
// skipped under the race detector (skipUnderRace says why).
const raceEnabled = true
