//go:build !race

package sip_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
