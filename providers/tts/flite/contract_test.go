package flite_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/brisvox/brisvox/providers/contracttest"
	"github.com/brisvox/brisvox/providers/providertest"
	"github.com/brisvox/brisvox/providers/tts/flite"
)

// contractBound is the harness's IOTimeout: the engine has no deadline, so
// it serves only as the suite's bound on waits (four times it) and as the
// span of the leak check's waits.
const contractBound = 2 * time.Second

// inProcessHarness is the contract suite's TTSHarness over the engine:
// there is no service, so nothing to reset and nothing to fault. It
// declares the engine in process (contracttest.TTSInProcess), so RunTTS skips
// the fault checks and never calls Inject; a call fails the test. The
// engine reports word times and has nothing to open, which TTSDefaults
// declares (FaultsAtConnect matters only to the skipped checks).
type inProcessHarness struct {
	contracttest.TTSDefaults
	t *testing.T
}

var (
	_ contracttest.TTSHarness   = inProcessHarness{}
	_ contracttest.TTSInProcess = inProcessHarness{}
)

func (inProcessHarness) Reset()                   {}
func (inProcessHarness) IOTimeout() time.Duration { return contractBound }
func (inProcessHarness) InProcess() bool          { return true }

func (h inProcessHarness) Inject(f providertest.Fault) {
	h.t.Errorf("Inject(%v) called for an in-process engine", f.Kind)
}

// TestContractSuite runs the TTS contract suite over the engine in a
// synctest bubble. A session has no timers, so its audio comes in no
// virtual time (the libflite calls count as running, not as blocked); the
// suite's own waits (settles, quiet windows, the leak check) make the
// virtual time. audio_and_words, flush, cancel, warm and no_goroutine_leak
// run and pass; reconnect, error_mapping and the five timeout checks are
// skipped as not applicable (no service to fault). Mutations of the
// engine seen failing it (applied, run, reverted): Cancel not dropping the
// context (cancel: its audio after the ack); no Cancelled ack (cancel);
// run not returning when the session ends (no_goroutine_leak, and the
// bubble deadlocks). Not seen by the suite: word offsets not carried from
// one synthesized piece to the next (its texts have no clause ends, so
// each context is one piece; TestWordsContinueAcrossPieces covers it).
func TestContractSuite(t *testing.T) {
	for _, voice := range []string{"slt", "kal16"} {
		t.Run(voice, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e, err := flite.New(flite.Config{Voice: voice})
				if err != nil {
					t.Skipf("flite engine unavailable: %v", err)
				}
				h := inProcessHarness{t: t}
				start := time.Now()
				rep, err := contracttest.RunTTS(context.Background(), e, h, contracttest.Config{})
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s\nvirtual %v", rep, time.Since(start))
				if got, want := len(rep.Checks), len(contracttest.TTSCheckNamesFor(h)); got != want {
					t.Fatalf("%d checks reported, want %d", got, want)
				}
				if !rep.Passed() {
					t.Fatalf("the engine breaks the contract:\n%s", rep)
				}
				if got := len(rep.Skipped()); got != 7 {
					t.Fatalf("%d checks skipped, want the 7 fault checks:\n%s", got, rep)
				}
			})
		})
	}
}
