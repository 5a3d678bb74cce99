package stock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/brisvox/brisvox/agent"
	"github.com/brisvox/brisvox/messages"
)

// Names of the recording tools.
const (
	PauseRecordingTool  = "pause_recording"
	ResumeRecordingTool = "resume_recording"
)

// RecordingController pauses and resumes a call's audio recording: the
// serve layer implements it over the node's recorder (silence is written
// while paused). Both must be harmless to repeat: pausing a paused
// recording or resuming a running one changes nothing. A call that is not
// being recorded (recordings off, or none for this call) is an error
// wrapping ErrNotRecorded; neither method blocks on the disk.
type RecordingController interface {
	PauseRecording(call messages.CallID) error
	ResumeRecording(call messages.CallID) error
}

// Refusals of pause_recording and resume_recording.
var (
	// ErrNotRecorded: the call has no recording to pause or resume
	// (recordings are off, or this call is not recorded). No audio of it
	// is being kept, so the caller may go on.
	ErrNotRecorded = errors.New("this call is not being recorded")
	// ErrPauseRecording: the controller could not pause a recording it
	// may still be making.
	ErrPauseRecording = errors.New("the recording could not be paused")
	// ErrResumeRecording: the controller could not resume the recording.
	ErrResumeRecording = errors.New("the recording could not be resumed")
)

// recordingParameters: no arguments. Unknown ones are not refused: a
// pause must not fail (and cost the turn a retry while the caller starts
// reading a card number) because the model added a reason.
const recordingParameters = `{"type":"object","properties":{}}`

// PauseRecording returns the pause_recording tool: it asks rc to pause
// the recording of CallInfo.Session and answers {"status":"paused", ...}
// (Summary "recording paused").
//
// It is ReadOnly in the contract's sense: pausing twice is pausing once,
// and running it early is the safe side, so the engine may run it in a
// speculative round, cancel it at a barge-in or run it again. No filler:
// it answers at once, and a phrase over a caller about to read out digits
// would only be in their way. A call that is not being recorded is an
// error wrapping ErrNotRecorded (the model may let the caller go on); any
// other failure wraps ErrPauseRecording and tells the model the call may
// still be recorded.
func PauseRecording(rc RecordingController) agent.Tool {
	spec := agent.NewSpec(PauseRecordingTool,
		"Pauses the call's audio recording. Call it just before the caller reads out a card number, "+
			"a security code or anything else that must not be recorded, and tell them it is paused. "+
			"Call resume_recording once they have finished.",
		agent.ReadOnly)
	spec.Parameters = json.RawMessage(recordingParameters)
	spec.FillerAfter = -1
	return &recordingTool{spec: spec, rc: rc, pause: true}
}

// ResumeRecording returns the resume_recording tool: it asks rc to
// resume the recording of CallInfo.Session and answers
// {"status":"recording", ...} (Summary "recording resumed").
//
// It is SideEffect although resuming twice is harmless: a ReadOnly call
// runs in a speculative round, which the engine starts while the caller
// has only paused for breath, and a caller pausing between groups of
// digits would then be recorded reading the rest. As SideEffect it runs
// only once the caller's turn is over. Repeatable: after a pause in a
// later response of the same turn, a resume must run again, not be
// answered already_done with the recording still silent. No filler.
func ResumeRecording(rc RecordingController) agent.Tool {
	spec := agent.NewSpec(ResumeRecordingTool,
		"Resumes the call's audio recording after pause_recording. Call it once the caller has finished "+
			"reading out the private details, and tell them the recording is on again.",
		agent.SideEffect)
	spec.Parameters = json.RawMessage(recordingParameters)
	spec.FillerAfter = -1
	spec.Repeatable = true
	return &recordingTool{spec: spec, rc: rc}
}

type recordingTool struct {
	spec  agent.Spec
	rc    RecordingController
	pause bool
}

var _ agent.Tool = (*recordingTool)(nil)

func (t *recordingTool) Spec() agent.Spec { return t.spec }

// What the model reads after each.
const (
	pausedResult  = `{"status":"paused","message":"The audio recording is paused: what is said now is not in it. Call resume_recording once the caller has finished."}`
	resumedResult = `{"status":"recording","message":"The audio recording is on again."}`
)

func (t *recordingTool) Call(ctx context.Context, _ json.RawMessage, call agent.CallInfo) (agent.Output, error) {
	failed := ErrResumeRecording
	if t.pause {
		failed = ErrPauseRecording
	}
	if call.Session == "" {
		return agent.Output{}, fmt.Errorf("%w: %w: the call is not known", failed, ErrNoSession)
	}
	if err := ctx.Err(); err != nil {
		return agent.Output{}, err
	}
	if t.rc == nil {
		return agent.Output{}, t.notRecorded(ErrNotRecorded)
	}
	var err error
	if t.pause {
		err = t.rc.PauseRecording(messages.CallID(call.Session))
	} else {
		err = t.rc.ResumeRecording(messages.CallID(call.Session))
	}
	switch {
	case errors.Is(err, ErrNotRecorded):
		return agent.Output{}, t.notRecorded(err)
	case err != nil && t.pause:
		return agent.Output{}, fmt.Errorf("%w: %w: the call may still be recorded: tell the caller before they read out anything private", failed, err)
	case err != nil:
		return agent.Output{}, fmt.Errorf("%w: %w: go on with the call", failed, err)
	case t.pause:
		return agent.Output{Content: pausedResult, Summary: "recording paused"}, nil
	default:
		return agent.Output{Content: resumedResult, Summary: "recording resumed"}, nil
	}
}

// notRecorded is the error result for a call without a recording: what
// the model may do next.
func (t *recordingTool) notRecorded(err error) error {
	if t.pause {
		return fmt.Errorf("%w: no audio of this call is kept, so there is nothing to pause: go on with the call", err)
	}
	return fmt.Errorf("%w: nothing to resume: go on with the call", err)
}
