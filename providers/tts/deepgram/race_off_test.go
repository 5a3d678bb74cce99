//go:build !race

package aura

const raceEnabled = false
