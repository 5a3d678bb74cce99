//go:build race

package jsonscan

const raceEnabled = true
