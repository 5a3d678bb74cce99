//go:build !race

package webrtc

const raceEnabled = false
