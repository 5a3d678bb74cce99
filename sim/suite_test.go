package sim

import (
	"testing"
	"testing/synctest"
)

// TestScenarios runs the scenario suite on the production actor tree, each
// scenario twice with equal fingerprints.
func TestScenarios(t *testing.T) {
	for _, c := range Scenarios() {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				out := RunCase(c)
				if !out.Passed {
					if out.Result != nil {
						t.Logf("records:\n%s", out.Result.FingerprintText())
					}
					t.Fatalf("%s: %v", c.Name, out.Err)
				}
				t.Logf("first audio %v, to silence %v, fingerprint %s", out.FirstAudio, out.ToSilence, out.Fingerprint)
			})
		})
	}
}

// TestPlayedText runs the played-text suite.
func TestPlayedText(t *testing.T) {
	for _, c := range PlayedTextCases() {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				out := RunCase(c)
				if !out.Passed {
					t.Fatalf("%s: %v", c.Name, out.Err)
				}
			})
		})
	}
}

// TestToolSuite runs the tool scenarios S1 to S6 in both shapes.
func TestToolSuite(t *testing.T) {
	for _, c := range ToolCases() {
		t.Run(c.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				if out := RunCase(c); !out.Passed {
					t.Fatalf("%s: %v", c.Name, out.Err)
				}
			})
		})
	}
}
