package tracing

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test ends with no goroutine of its own left: the tracer's, the
// batch processor's, the exporter's connections and the collector's.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
