package serve

import (
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

func (s *Server) controlRecording(call messages.CallID, pause bool) error {
	what := "resumed"
	if pause {
		what = "paused"
	}
	keeper := s.cfg.Records
	if keeper == nil {
		s.count("recording_controls_unrecorded")
		return fmt.Errorf("%w: this node keeps no recordings", stock.ErrNotRecorded)
	}
	var err error
	if pause {
		err = keeper.Pause(string(call))
	} else {
		err = keeper.Resume(string(call))
	}
	if err != nil {
		// RecordKeeper's contract: any error of Pause or Resume means no
		// live recording of the call here (recording.ErrNoCall, or
		// recordings off).
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
