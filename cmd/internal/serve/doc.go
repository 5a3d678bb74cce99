// Package serve is `brisvox serve`: one process that serves the call page
// and its WebRTC signaling, the carrier websockets, /healthz and /readyz,
// and runs each call that comes in through any of them as a session on one
// switchboard. On shutdown it stops admitting, lets live calls finish up to
// a deadline, then ends the rest with a closing line.
//
// The transports hand every new call to Server.Start (their callbacks do
// nothing else); an Agent turns it into a session config (providers,
// prompt, tools). The session's live events go back to the caller's page
// as JSON (events.go) when the connection can publish them.
package serve
