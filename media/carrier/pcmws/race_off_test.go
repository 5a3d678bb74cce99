//go:build !race

package pcmws

// raceEnabled: see race_on_test.go.
const raceEnabled = false
