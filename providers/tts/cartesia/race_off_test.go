//go:build !race

package cartesia

const raceEnabled = false
