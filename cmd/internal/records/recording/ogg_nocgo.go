//go:build !cgo

package recording

// oggBuilt: a build without cgo has no libopus; Validate refuses ogg.
const oggBuilt = false

func newOgg(string, int) (container, error) {
	return nil, ErrInvalidConfig
}
