// Package journal is the node's write-ahead journal on local disk: the
// records service appends a call's record here (durable on return) before
// it tries the database, and acks it once the database has it; the
// webhook sender keeps its queue in one too; the live-call journal keeps
// the checkpoints a crashed node's calls are rebuilt from.
//
// A journal is a directory of segments, <dir>/<first seq, 20 digits>.wal,
// each a run of frames (length, CRC32C, kind, seq, payload), written in
// seq order and fdatasync'd before Append returns; appends that arrive
// while a sync runs share the next one (group commit). An ack is a frame
// of its own in the segment's side file, <first seq>.ack, synced before
// Ack returns, so a replay after a restart skips acked entries; a segment
// whose entries are all acked (and that is not the one being written) is
// deleted with its side file. Open scans every segment: a torn last frame
// (a crash mid-write) is cut and counted, a corrupt frame in the middle is
// skipped and counted and the scan resynchronises on the next valid frame.
package journal
