package carriertest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/brisvox/brisvox/internal/logtest"
)

// StrictJSONLines fails the test unless every line of log is one JSON
// object with no key given twice at any level (internal/logtest): what
// strict log pipelines accept. It returns the number of lines.
func StrictJSONLines(tb testing.TB, log []byte) int {
	tb.Helper()
	if err := logtest.Check(log, nil); err != nil {
		tb.Errorf("log is not strict JSON: %v", err)
	}
	n := 0
	for _, line := range bytes.Split(log, []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			n++
		}
	}
	return n
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
