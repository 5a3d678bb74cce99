//go:build !race

package httpllm

const raceEnabled = false
