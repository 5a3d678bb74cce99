//go:build !race

package deepgram

const raceEnabled = false
