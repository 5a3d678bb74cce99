//go:build !race

package pocketsphinx

const raceEnabled = false
