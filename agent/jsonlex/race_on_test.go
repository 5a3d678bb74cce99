//go:build race

package jsonlex

const raceEnabled = true
