//go:build !race

package ttspump

const raceEnabled = false
