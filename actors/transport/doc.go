// Package transport is the bridge between a call's audio connection (SIP/RTP,
// WebRTC, a websocket, or the simulator's loopback) and its actor tree: a
// reader goroutine owned by the actor turns incoming audio into pooled frames
// for the vad actor, and the actor writes the pacer's frames, clears and
// marks to the connection and turns mark echoes into messages. A Conn that
// hears key presses (DTMFReceiver) has each one forwarded, counted, as a
// messages.DTMF to the turn actor.
package transport
