package serve

import (
	"errors"
	"fmt"

	"github.com/brisvox/brisvox/agent/stock"
	"github.com/brisvox/brisvox/messages"
)

// The serve side of the recording tools (pause_recording,
// resume_recording): the Server pauses and resumes a live call's
// recording through Config.Records, as the operator API's
// .../recording/pause and .../resume do.
var _ stock.RecordingController = (*Server)(nil)

// PauseRecording pauses the call's recording (silence is written until
// ResumeRecording). Without Config.Records, or when the keeper has no live
// recording of the call, the error wraps stock.ErrNotRecorded: no audio
// of the call is being kept.
func (s *Server) PauseRecording(call messages.CallID) error {
	return s.controlRecording(call, true)
}

// ResumeRecording ends the call's pause (errors as PauseRecording's).
func (s *Server) ResumeRecording(call messages.CallID) error {
	return s.controlRecording(call, false)
}

// setRecording pauses or resumes the call's recording through
// Config.Records: the one place the tools and the operator API reach the
// recorder. Any error wraps ErrNoRecording: RecordKeeper's contract is
// that an error of Pause or Resume means no live recording of the call
// here (recording.ErrNoCall, or recordings off).
func (s *Server) setRecording(call messages.CallID, pause bool) error {
	keeper := s.cfg.Records
	if keeper == nil {
		return fmt.Errorf("%w: this node keeps no recordings", ErrNoRecording)
	}
	var err error
	if pause {
		err = keeper.Pause(string(call))
	} else {
		err = keeper.Resume(string(call))
	}
	if err != nil && !errors.Is(err, ErrNoRecording) {
		err = fmt.Errorf("%w: no live recording of it on this node (%w)", ErrNoRecording, err)
	}
	return err
}

func (s *Server) controlRecording(call messages.CallID, pause bool) error {
	what := "resumed"
	if pause {
		what = "paused"
	}
	if err := s.setRecording(call, pause); err != nil {
		s.count("recording_controls_unrecorded")
		return fmt.Errorf("%w: %w", stock.ErrNotRecorded, err)
	}
	if pause {
		s.count("recording_pauses")
	} else {
		s.count("recording_resumes")
	}
	// When a recording was paused is for the audit, as the operator's.
	s.log.Info().Str("call_id", string(call)).Str("recording", what).Msg("tool recording " + what)
	return nil
}
