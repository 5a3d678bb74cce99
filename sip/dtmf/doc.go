// Package dtmf turns the caller's key presses into messages.DTMF, one per
// press, from the two ways a SIP call carries them:
//
//   - RFC 4733 telephone-events in the RTP stream: sip/rtp hands each
//     telephone-event packet of a stream to that stream's Detector, which
//     tracks the event the packets belong to and reports a press when it
//     ends (its end packet, or a silence of Config.EndTimeout after its last
//     packet, polled with Expire at the time Deadline says).
//   - SIP INFO requests: sip/signal hands the body and its Content-Type to
//     ParseInfo (application/dtmf-relay or application/dtmf) and answers
//     the request by the error's sentinel (400 for a malformed body, 415
//     for another type).
//
// Sending: Generator is the RFC 4733 schedule of a string of digits (the
// packets of each event, its three end packets, the gap before the next),
// which sip/rtp's SendDTMF plays; InfoBody is the application/dtmf-relay
// body of one digit for the SIP INFO way.
//
// The presses go into the call as messages.DTMF; what a digit does is the
// turn actor's choice. Nothing here logs: a key press is the caller's
// content.
package dtmf
