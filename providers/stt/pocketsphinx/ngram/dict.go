package ngram

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// maxDictLine bounds a dictionary line (cmudict's longest is under 100
// bytes).
const maxDictLine = 4096

// Dict is the words of a pronunciation dictionary: the words a
// recognizer can write. It is read-only after ReadDict.
type Dict struct {
	words map[string]struct{}
}

// ReadDict reads a sphinx pronunciation dictionary (cmudict-en-us.dict):
// one word a line followed by its phones, separated by blanks; an
// alternate pronunciation is the word with a "(2)" suffix; blank lines
// and lines starting ";;" are skipped. The error wraps ErrDict and gives
// the line.
func ReadDict(r io.Reader) (*Dict, error) {
	d := &Dict{words: map[string]struct{}{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256), maxDictLine)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.HasPrefix(line, ";;") {
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) == 1 {
			return nil, fmt.Errorf("%w: line %d: word %q has no phones", ErrDict, n, truncate(f[0]))
		}
		w := f[0]
		if i := strings.LastIndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") && isDigits(w[i+1:len(w)-1]) {
			w = w[:i]
		}
		d.words[w] = struct{}{}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: line %d is longer than %d bytes", ErrDict, n+1, maxDictLine)
		}
		return nil, fmt.Errorf("%w: %w", ErrDict, err)
	}
	if len(d.words) == 0 {
		return nil, fmt.Errorf("%w: no words", ErrDict)
	}
	return d, nil
}

// Has tells whether the dictionary holds w.
func (d *Dict) Has(w string) bool {
	_, ok := d.words[w]
	return ok
}

// Len is the count of distinct words.
func (d *Dict) Len() int { return len(d.words) }

// Missing is the words of ws the dictionary lacks, sorted, once each.
func (d *Dict) Missing(ws []string) []string {
	var out []string
	for _, w := range ws {
		if !d.Has(w) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// truncate shortens outside text quoted in an error.
func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}
