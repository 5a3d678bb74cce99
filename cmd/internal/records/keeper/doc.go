// Package keeper joins what is kept of a call (its record, its
// recording, its trace) into the one serve.Keeper the server follows
// calls with. Each part is optional; a call's follower hands the record
// the recording's account and the trace id.
package keeper
