package pocketsphinx

import (
	"fmt"
	"os"

	"github.com/brisvox/brisvox/providers/stt/pocketsphinx/ngram"
)

// domainModel builds the ARPA text of cfg.Domain's trigram model, its
// words checked against cfg.Dict. The error wraps ErrInvalidConfig (and
// ngram.ErrUnknownWords when words are missing).
func domainModel(cfg Config) ([]byte, error) {
	f, err := os.Open(cfg.Dict)
	if err != nil {
		return nil, fmt.Errorf("%w: Dict: %v", ErrInvalidConfig, err)
	}
	defer f.Close()
	dict, err := ngram.ReadDict(f)
	if err != nil {
		return nil, fmt.Errorf("%w: Dict %s: %w", ErrInvalidConfig, cfg.Dict, err)
	}
	m, err := ngram.New(ngram.Config{Sentences: cfg.Domain, Dict: dict})
	if err != nil {
		return nil, fmt.Errorf("%w: Domain (%d sentences): %w", ErrInvalidConfig, len(cfg.Domain), err)
	}
	return m.ARPA(), nil
}
