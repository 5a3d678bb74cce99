//go:build !race

package eot

const raceEnabled = false
