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

// DTMFSource names where a key press came from.
type DTMFSource string

// The DTMF sources.
const (
	// DTMFRFC4733 is an RTP telephone-event (RFC 4733).
	DTMFRFC4733 DTMFSource = "rfc4733"
	// DTMFSIPInfo is a SIP INFO request (application/dtmf-relay or
	// application/dtmf).
	DTMFSIPInfo DTMFSource = "sip_info"
	// DTMFCarrier is a carrier media stream's dtmf event (Twilio).
	DTMFCarrier DTMFSource = "carrier"
)

// DTMF is one key press of the caller, delivered once per press whatever
// the transport (the RFC 4733 end packets, repeated three times, make one
// DTMF). Digit is one of 0-9, *, #, A-D. The turn actor decides what a
// digit does (collect digits into a turn, or barge in).
type DTMF struct {
	Digit    byte
	Source   DTMFSource
	Duration time.Duration
	At       time.Time
}

// ValidDTMFDigit reports whether d is a DTMF key: 0-9, *, #, A-D.
func ValidDTMFDigit(d byte) bool {
	return (d >= '0' && d <= '9') || d == '*' || d == '#' || (d >= 'A' && d <= 'D')
}
