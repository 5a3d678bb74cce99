//go:build !race

package sdp

const raceEnabled = false
