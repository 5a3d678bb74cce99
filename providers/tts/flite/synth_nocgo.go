//go:build !cgo

package flite

// voice stands for a libflite voice in a build without cgo, where none can
// be loaded.
type voice struct{}

// loadVoice fails: libflite is not linked without cgo.
func loadVoice(string) (*voice, error) { return nil, ErrNoCgo }

// synthesize is never reached: New fails first.
func (*voice) synthesize(string, int) (utterance, error) { return utterance{}, ErrNoCgo }
