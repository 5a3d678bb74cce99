//go:build !race

package elevenlabs

const raceEnabled = false
