//go:build race

package sip_test

// raceEnabled: the race detector slows the server several times over, so
// the real-time flood test, which measures keeping up with sipsak, runs
// without it only.
const raceEnabled = true
