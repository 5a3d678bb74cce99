//go:build !race

package twilio

// raceEnabled: see race_on_test.go.
const raceEnabled = false
