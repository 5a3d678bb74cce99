package dtmf_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine is left at the end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
