// Package webrtctest is a WebRTC caller for tests and load runs: Dial
// sends an offer to a media/webrtc Server (HTTP, then trickle ICE over the
// call's websocket), and the Caller streams Opus audio paced at 20 ms of
// real time (silence when nothing is queued, with a browser's DTX when
// the answer asks for it: usedtx=1), decodes what the server
// sends back, records packet arrival times for jitter figures, and keeps
// the live events of the websocket. It is pion on both sides plus the
// project's cgo Opus; it uses real UDP sockets (127.0.0.1 by default).
//
// The caller's UDP socket goes through a gate that can drop everything
// (Vanish, Options.Unreachable), which is how tests make a client vanish
// without a DTLS close or never answer ICE at all.
package webrtctest
