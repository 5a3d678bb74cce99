//go:build !race

package openaispeech

const raceEnabled = false
