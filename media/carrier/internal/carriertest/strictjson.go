package carriertest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
)

// StrictJSONLines fails the test unless every line of log is one JSON
// object with no key given twice at any level: what strict log
// pipelines accept. It returns the number of lines.
func StrictJSONLines(tb testing.TB, log []byte) int {
	tb.Helper()
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		n++
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := strictValue(dec); err != nil {
			tb.Errorf("log line %d is not strict JSON (%v): %s", n, err, line)
		}
		if dec.More() {
			tb.Errorf("log line %d has data after its object: %s", n, line)
		}
	}
	return n
}

// strictValue reads one value, failing on a duplicate key in an object.
func strictValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			key := k.(string)
			if seen[key] {
				return fmt.Errorf("key %q twice", key)
			}
			seen[key] = true
			if err := strictValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token() // '}'
		return err
	case json.Delim('['):
		for dec.More() {
			if err := strictValue(dec); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// LogBuffer is an io.Writer for a test's logger, safe for the
// concurrent writes of a handler's goroutines.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes copies what was written.
func (b *LogBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}
