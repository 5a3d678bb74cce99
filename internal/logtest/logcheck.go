package logtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Check reads log lines from out and returns the first problem: a line
// that is not exactly one JSON object (ErrNotJSON), or an object, at any
// depth, with a key twice (ErrDuplicateKey). Empty lines are skipped.
// keep, when set, says which lines to check (a stream that mixes log
// lines with a command's plain messages); nil checks every line.
func Check(out []byte, keep func(line []byte) bool) error {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || (keep != nil && !keep(line)) {
			continue
		}
		if err := checkLine(line); err != nil {
			return fmt.Errorf("line %d: %w: %.200s", n, err, line)
		}
	}
	return sc.Err()
}

// JSONLines keeps the lines that begin with '{': a command's stderr where
// its own messages are plain text and its log lines JSON.
func JSONLines(line []byte) bool { return len(line) > 0 && line[0] == '{' }

func checkLine(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return ErrNotJSON
	}
	if err := object(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: text after the object", ErrNotJSON)
	}
	return nil
}

// object reads the rest of an object whose '{' was read.
func object(dec *json.Decoder) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrNotJSON, err)
		}
		key, ok := tok.(string)
		if !ok {
			return ErrNotJSON
		}
		if seen[key] {
			return fmt.Errorf("%w %q", ErrDuplicateKey, key)
		}
		seen[key] = true
		if err := value(dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	return nil
}

func value(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotJSON, err)
	}
	switch tok {
	case json.Delim('{'):
		return object(dec)
	case json.Delim('['):
		for dec.More() {
			if err := value(dec); err != nil {
				return err
			}
		}
		if _, err := dec.Token(); err != nil { // ']'
			return fmt.Errorf("%w: %w", ErrNotJSON, err)
		}
	}
	return nil
}
