// Package rtp is the media half of one SIP call: its RTP and RTCP over our
// own UDP sockets. The signalling layer makes a Session when an INVITE
// comes in (New binds an even RTP port and the RTCP port above it from the
// configured range, so the SDP answer can carry them), starts it with the
// negotiated parameters once the answer is sent (Start), applies every
// later offer/answer (Update: hold and resume, a new codec, a new remote
// address), and closes it when the call ends. The integrator wraps the
// Session with the dialog into the served call's conn.Conn.
//
// Inbound, a reader goroutine per socket hands each datagram to the strict
// source latch (the RTPBleed defence, as Asterisk's strictrtp and
// rtpengine do it): before the lock, only the address and port the SDP
// signalled may teach the session its peer (any address with
// Config.SymmetricRTP, for callers behind NAT), by a short run of packets
// with consecutive sequence numbers and one SSRC; then address, port and
// SSRC are locked, and every other packet is dropped and counted by cause.
// Only Update with new parameters (a new offer/answer) learns again. Then the demux: RTCP on a muxed port (second
// byte 200-207), telephone events to Config.OnEvent, comfort noise counted
// and played as silence (never decoded as speech), audio into the jitter
// buffer. The media clock pops the jitter buffer at the remote's packet
// time (detected from the latching packet when the SDP said otherwise:
// sipp signals nothing and sends 30 ms), decodes or conceals, converts the
// line rate to Config.InputRate once, and queues 20 ms frames for
// ReadFrame.
//
// Outbound, WriteFrame queues 20 ms frames (bounded, never blocking); the
// same clock takes a packet time of them per tick, converts to the line
// rate, encodes, and sends one packet with our SSRC, sequence number and
// timestamp (random starts, the marker on a talk spurt's first packet).
// When idle it sends encoded silence, which keeps the remote's playout
// timing and the NAT bindings on the path alive; on hold (the remote's
// sendonly or inactive) nothing goes out. Marks echo once the audio queued
// before them has been sent; Clear drops the queued audio of older epochs.
//
// Key presses out: SendDTMF plays sip/dtmf's Generator on the same clock,
// RFC 4733 telephone-events at the negotiated event payload type in place
// of audio (the queue waits, the gaps between digits carry audio, one
// SSRC and sequence), a cut-short send still closing its digit with three
// end packets; ErrNoTelephoneEvent when the peer offered none.
//
// Bridging (sip/bridge): SetRelay hands the latched source's packets to a
// relay instead of the jitter buffer, with no session lock held;
// SetRelayOutput and Relay put another session's packets on our stream
// (our SSRC, sequence and timestamps) in place of the engine's audio. The
// latch, RTCP and the media timeout work the same in both modes.
//
// RTCP: a report every Config.RTCPInterval (randomised over 0.5-1.5 of it,
// RFC 3550): a sender report while we send, a receiver report otherwise,
// with the loss and jitter of what we receive; the remote's reports give
// what it says about our stream and the round trip. A BYE goes out on
// Close.
//
// Liveness: no RTP for Config.MediaTimeout in a sendrecv call ends the
// session with ErrMediaTimeout (Done, Err; ReadFrame then returns
// conn.ErrClosed wrapping conn.ErrVanished and it, so the call
// ends "vanished"): the integrator hangs up with a BYE. A held call
// (sendonly, recvonly, inactive) is not cut for its missing RTP: RTCP goes
// on during a hold, so it ends when neither RTP nor RTCP came for the
// timeout (at least 25 s, five of the shortest report intervals) from a
// remote that sent RTCP before; one that never sent RTCP is not cut while
// held (the session timer is the bound then).
//
// Stats is a snapshot for Describe and Prometheus. Nothing of the media or
// the peer's addresses is logged; a log line carries the call id and the
// error only.
package rtp
