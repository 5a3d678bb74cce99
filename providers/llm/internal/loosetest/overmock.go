package loosetest

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/brisvox/brisvox/providers"
)

// The broken scripts every adapter's mock must serve for OverMock (the
// adapter's looseScript makes them in its vendor's shapes).
const (
	// BrokenNone is the plausible script: text; two parallel get_weather
	// calls; text after the results; a long answer for the cancel step.
	BrokenNone = ""
	// BrokenNoEnd: the text answer lacks the vendor's end of response.
	BrokenNoEnd = "no end"
	// BrokenArgs: a call's arguments are not JSON.
	BrokenArgs = "args not JSON"
	// BrokenFollowUp: the answer after the results has no text.
	BrokenFollowUp = "follow-up without text"
)

// MockCase is one script of OverMock and the step it must fail (none for
// BrokenNone) with the error it must wrap.
type MockCase struct {
	Broken string
	Step   string
	Want   error
}

// MockCases are the cases of OverMock. A vendor whose wire refuses
// non-JSON arguments as a malformed stream (Gemini sends arguments as an
// object) changes the BrokenArgs case's Want to ErrStream.
func MockCases() []MockCase {
	return []MockCase{
		{Broken: BrokenNone},
		{Broken: BrokenNoEnd, Step: StepText, Want: ErrStream},
		{Broken: BrokenArgs, Step: StepTools, Want: ErrCall},
		{Broken: BrokenFollowUp, Step: StepTools, Want: ErrText},
	}
}

// OverMock runs the loose assertions against an adapter over its mock for
// each case, each in its own testing/synctest bubble (virtual time):
// start builds the mock serving the case's script and the adapter dialing
// it (closing both with t.Cleanup or defer inside the bubble); the
// plausible script must pass every step, and then plausible checks what
// the mock received; a broken one must fail exactly its step. This keeps
// the loose assertions checked on every run of the normal suite.
func OverMock(t *testing.T, cases []MockCase, start func(t *testing.T, broken string) providers.LLM, plausible func(t *testing.T, rep Report)) {
	for _, c := range cases {
		name := c.Broken
		if name == BrokenNone {
			name = "plausible"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := start(t, c.Broken)
				rep, err := Run(t.Context(), a, Config{})
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range rep.Steps {
					switch {
					case s.Name == c.Step && !errors.Is(s.Err, c.Want):
						t.Errorf("step %s: err = %v, want %v", s.Name, s.Err, c.Want)
					case s.Name != c.Step && s.Err != nil:
						t.Errorf("step %s: %v", s.Name, s.Err)
					}
				}
				if c.Broken == BrokenNone {
					if st, _ := rep.Step(StepTools); st.Calls != 2 || st.Requests != 2 {
						t.Fatalf("tools step: %d calls, %d requests; want 2 parallel calls and the follow-up", st.Calls, st.Requests)
					}
					plausible(t, rep)
				}
			})
		})
	}
}
