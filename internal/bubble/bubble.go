package bubble

import (
	"errors"
	"io"
	"os"
	"reflect"
	"testing"
	"testing/synctest"
	"time"
)

// ErrFailed is returned when a function failed inside its bubble.
var ErrFailed = errors.New("bubble: run failed")

// Run calls each of fs in its own synctest bubble, in order, and reports
// whether all of them returned without failing their *testing.T. The
// testing package's own output (PASS/FAIL lines) goes to os.Stderr.
//
// It drives the testing package through testing.MainStart, which is how
// the go test driver runs a test binary: the package offers no other way to
// obtain a *testing.T, which synctest.Test requires. Run changes os.Args
// for the call (the testing flags must not see the program's own).
func Run(fs ...func(t *testing.T)) error {
	tests := make([]testing.InternalTest, len(fs))
	for i, f := range fs {
		tests[i] = testing.InternalTest{Name: "bubble", F: func(t *testing.T) { synctest.Test(t, f) }}
	}
	args := os.Args
	os.Args = []string{args[0], "-test.count=1"}
	defer func() { os.Args = args }()
	stdout := os.Stdout
	os.Stdout = os.Stderr // keep the program's stdout clean (--json)
	defer func() { os.Stdout = stdout }()
	testing.Init()
	if code := testing.MainStart(deps{}, tests, nil, nil, nil).Run(); code != 0 {
		return ErrFailed
	}
	return nil
}

// corpusEntry matches the testing package's fuzzing corpus type.
type corpusEntry = struct {
	Parent     string
	Path       string
	Data       []byte
	Values     []any
	Generation int
	IsSeed     bool
}

var errUnsupported = errors.New("bubble: not supported")

// deps is the minimal driver the testing package needs to run tests:
// everything but MatchString is unused here.
type deps struct{}

func (deps) ImportPath() string                          { return "" }
func (deps) ModulePath() string                          { return "" }
func (deps) MatchString(string, string) (bool, error)    { return true, nil }
func (deps) SetPanicOnExit0(bool)                        {}
func (deps) StartCPUProfile(io.Writer) error             { return errUnsupported }
func (deps) StopCPUProfile()                             {}
func (deps) StartTestLog(io.Writer)                      {}
func (deps) StopTestLog() error                          { return nil }
func (deps) WriteProfileTo(string, io.Writer, int) error { return errUnsupported }
func (deps) CoordinateFuzzing(time.Duration, int64, time.Duration, int64, int, []corpusEntry, []reflect.Type, string, string) error {
	return errUnsupported
}
func (deps) RunFuzzWorker(func(corpusEntry) error) error              { return errUnsupported }
func (deps) ReadCorpus(string, []reflect.Type) ([]corpusEntry, error) { return nil, nil }
func (deps) CheckCorpus([]any, []reflect.Type) error                  { return nil }
func (deps) ResetCoverage()                                           {}
func (deps) SnapshotCoverage()                                        {}
func (deps) InitRuntimeCoverage() (string, func(string, string) (string, error), func() float64) {
	return "", nil, nil
}
