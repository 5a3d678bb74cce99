package messages

import "time"

// SpeechStarted is the VAD's mark that the caller started speaking. At is
// backdated to the first speech frame's start.
type SpeechStarted struct {
	At time.Time
	// DetectedAt is when the VAD was sure (At plus its start delay).
	DetectedAt time.Time
}

// SpeechStopped is the VAD's mark that the caller stopped speaking. At is
// backdated to the end of the last speech frame.
type SpeechStopped struct {
	At         time.Time
	DetectedAt time.Time
}

// Transcript is an STT result.
type Transcript struct {
	Text string
	// Final is set for a final result of a segment; interims are not final.
	Final bool
	// SpeechFinal marks the end of the caller's utterance as the provider
	// sees it.
	SpeechFinal bool
	// FromFinalize marks the final that answers a Finalize request.
	FromFinalize bool
	At           time.Time
}

// SttFailed tells the turn actor that the STT session failed and any
// finalize it was waiting for will not be answered.
type SttFailed struct {
	At time.Time
}
