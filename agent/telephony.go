package agent

import (
	"encoding/json"
	"time"
)

// Names of the telephony tools.
const (
	TransferCallTool = "transfer_call"
	EndCallTool      = "end_call"
	SendDTMFTool     = "send_dtmf"
)

// The telephony specs below only declare the tools: the SIP layer provides
// the Tool behind each (it holds the dialog, one transfer per call, the
// carrier's call id), so a call that uses them registers them on its own
// registry. They exist now so an agent can name them and a registry can
// check their arguments before the SIP layer lands.
//
// All three are SideEffect: hanging up, transferring or pressing a key
// cannot be taken back, so none is run speculatively or twice for one call.

// SendDTMFTimeout bounds send_dtmf: 32 digits of about 100 ms of tone and
// 70 ms of pause each take about 5.4 s, past DefaultTimeout.
const SendDTMFTimeout = 10 * time.Second

// transferCallParameters: an E.164 number ("+33123456789") or a sip: or
// sips: URI, at most 256 bytes. The pattern is anchored: JSON Schema
// patterns are not.
const transferCallParameters = `{
	"type": "object",
	"properties": {
		"destination": {
			"type": "string",
			"description": "Where to transfer the caller: a phone number in E.164 form (+ then country code and number, digits only, like +33123456789) or a SIP URI (sip:desk@example.com).",
			"maxLength": 256,
			"pattern": "^(\\+[1-9][0-9]{1,14}|sips?:([^\\s@]+@)?[^\\s@]+)$"
		},
		"reason": {
			"type": "string",
			"description": "Why the caller is transferred, in a few words, for the call record.",
			"maxLength": 200
		}
	},
	"required": ["destination"],
	"additionalProperties": false
}`

const endCallParameters = `{
	"type": "object",
	"properties": {
		"reason": {
			"type": "string",
			"description": "Why the call ends, in a few words, for the call record.",
			"maxLength": 200
		}
	},
	"additionalProperties": false
}`

const sendDTMFParameters = `{
	"type": "object",
	"properties": {
		"digits": {
			"type": "string",
			"description": "The keys to press, in order: 0-9, *, # and A-D (capital letters), 1 to 32 of them, like \"1\" or \"4521#\".",
			"pattern": "^[0-9*#A-D]{1,32}$"
		}
	},
	"required": ["digits"],
	"additionalProperties": false
}`

// TransferCallTimeout bounds transfer_call: a blind transfer succeeds when
// the far end reports the new party answered (a NOTIFY, up to 30 s of
// ringing), past DefaultTimeout.
const TransferCallTimeout = 45 * time.Second

// TransferCallSpec declares transfer_call(destination, reason?): a blind
// transfer of the caller. SideEffect and not Repeatable (one transfer per
// call). Confirm is on: a caller could talk the model into a transfer of
// their choosing, so the call is held until the caller agreed (an agent
// file may turn it off for this tool, see docs/TOOLS.md).
func TransferCallSpec() Spec {
	s := NewSpec(TransferCallTool,
		"Transfers the caller to another phone number or SIP address; this agent then leaves the call. "+
			"Tell the caller before you call it.",
		SideEffect)
	s.Parameters = json.RawMessage(transferCallParameters)
	s.Timeout = TransferCallTimeout
	s.Confirm = true
	return s
}

// EndCallSpec declares end_call(reason?): hang up. SideEffect and not
// Repeatable. No filler: a phrase played while hanging up would be cut off.
func EndCallSpec() Spec {
	s := NewSpec(EndCallTool,
		"Hangs up the call. Say goodbye first: nothing said after this is heard.",
		SideEffect)
	s.Parameters = json.RawMessage(endCallParameters)
	s.FillerAfter = -1
	return s
}

// SendDTMFSpec declares send_dtmf(digits): press keys on the call, for an
// IVR. SideEffect and Repeatable: pressing the same key again in a later
// response is a new press, not a repeat to refuse. No filler: a phrase
// played into a phone menu would be heard by it, not by a person.
func SendDTMFSpec() Spec {
	s := NewSpec(SendDTMFTool,
		"Presses keys on the phone (touch tones), for example to answer a phone menu. "+
			"To press the same key again later, call it again.",
		SideEffect)
	s.Parameters = json.RawMessage(sendDTMFParameters)
	s.Timeout = SendDTMFTimeout
	s.FillerAfter = -1
	s.Repeatable = true
	return s
}

// TelephonySpecs returns the three telephony specs in name order (end_call,
// send_dtmf, transfer_call), as Registry.Specs would list them. Each call
// returns new specs: editing one changes nothing else.
func TelephonySpecs() []Spec {
	return []Spec{EndCallSpec(), SendDTMFSpec(), TransferCallSpec()}
}
