package ngram

import "errors"

// Sentinel errors of the package; errors wrap them as
// fmt.Errorf("%w: detail", ErrX).
var (
	// ErrInvalidConfig: a Config that Validate refuses (no sentences, an
	// order out of range, a reserved or empty word).
	ErrInvalidConfig = errors.New("ngram: invalid config")
	// ErrUnknownWords: the sentences hold words the pronunciation
	// dictionary lacks; the error names them.
	ErrUnknownWords = errors.New("ngram: words missing from the pronunciation dictionary")
	// ErrDict: a pronunciation dictionary that does not parse.
	ErrDict = errors.New("ngram: bad pronunciation dictionary")
)
