//go:build !cgo

package recording_test

const oggBuilt = false
