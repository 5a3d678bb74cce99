//go:build !race

package wscall

// raceEnabled: see race_on_test.go.
const raceEnabled = false
