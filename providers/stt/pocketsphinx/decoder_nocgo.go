//go:build !cgo

package pocketsphinx

// cgoEnabled: this build cannot load libpocketsphinx; New says so.
const cgoEnabled = false

// loadDecoder is never reached (New refuses first); it keeps the package
// whole without cgo.
func loadDecoder(Config) (recognizer, error) { return nil, ErrNoCgo }
