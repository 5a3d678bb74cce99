// Package switchboard is the node's registry of live calls: it admits a call
// (up to a limit), spawns its session under the call id, lists the calls and
// routes operator commands (Describe, Restart, Hangup) to a call's session.
// A call's session is its child, so a failure of one call never reaches
// another.
package switchboard
