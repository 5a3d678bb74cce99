//go:build !race

package validate

// raceEnabled: see race_on_test.go.
const raceEnabled = false
