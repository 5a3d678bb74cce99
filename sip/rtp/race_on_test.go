//go:build race

package rtp

const raceEnabled = true
