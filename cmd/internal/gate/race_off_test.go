//go:build !race

package gate

// raceEnabled: see race_on_test.go.
const raceEnabled = false
