//go:build race

package pocketsphinx

const raceEnabled = true
