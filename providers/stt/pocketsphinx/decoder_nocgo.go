//go:build !cgo

package pocketsphinx

// cgoEnabled: this build cannot load libpocketsphinx; New says so.
const cgoEnabled = false

// loadDecoder is never reached (New refuses first); it keeps the package
// whole without cgo.
func loadDecoder(Config) (recognizer, error) { return nil, ErrNoCgo }

// trimHeap has no C heap to trim in this build.
func trimHeap() {}

// canTrimHeap: no C heap in this build.
func canTrimHeap() bool { return false }
