// Command brisvox-bench measures the engine under load.
//
//	brisvox-bench webrtc-load [--calls 60] [--hold 30s] [--warmup 5s] [--complexity 5] [--json]
//
// webrtc-load serves N concurrent WebRTC calls on loopback and reports the
// server's CPU per call and the outbound frame jitter its callers see. The
// server is this process: `brisvox serve`'s server with the production
// actor tree of each call and the WebRTC transport (Opus at the given
// complexity), its agent speaking all the time (a long greeting from the
// simulator's mock TTS, so every call's output path encodes real audio
// each 20 ms) while the caller's silence goes through the input path, the
// energy VAD and a mock STT. The callers are a child process
// (webrtc-callers, pion peers from media/webrtc/webrtctest), so the CPU
// measured is the server's alone; both share the machine's cores, as a
// server and its load generator on one host do.
//
// Jitter is |arrival gap - 20 ms| of the RTP packets each caller received
// during the hold, after the warm-up, over all calls: p50, p99 and max.
// CPU is the server process's user+system time over the hold, per call, in
// percent of one core. Figures go to docs/LATENCY.md with the command
// line that made them; there is no pass/fail threshold here.
//
//	brisvox-bench latency --brisvox PATH [--agent examples/agents/local.toml] [--turns 20] [--voice slt] [--json]
//
// latency serves the agent on a brisvox serve child and calls it over the
// PCM websocket as a caller would, in real time: after the greeting, it
// says --turns plain questions ("hello", "what can you do") and as many
// tool turns ("what time is it": get_time), interleaved, each synthesised
// by the flite command and sent in 20 ms frames followed by silence. A
// turn's latency is from the last sample of sound it sent to the first
// sample of sound it received, on its own clock; it waits for each answer
// to end before the next turn. It reports median, p90, min and max per
// kind, and the server's own latency split by stage (the latency event's
// stages: listen, end_of_turn, think, tools, voice, send).
//
//	brisvox-bench asr [--voices slt,rms,awb,espeak] [--paths 16k,mulaw8k] [--models general,domain] [--json]
//
// asr measures the keyless agent's recognizer: the corpus of
// testdata/asr/corpus.tsv (built into the binary; --corpus gives another)
// is spoken by flite's voices and espeak-ng (the programs, cached in
// --cache), at 16 kHz and through 8 kHz G.711 mu-law and back (sox), and
// decoded by pocketsphinx's session API, a fresh engine for each model x
// voice x path decoding the corpus in order, so the figures are the same
// on every run. It reports word accuracy (1 - WER over the words as the
// rules provider reads them, numbers as digits), slot accuracy (party,
// time and name as rules.ReadBooking reads them from the transcript,
// against the corpus's), and the share of the out-of-domain utterances
// that came out as words; and issue 16's own sentence on its own lines.
// Figures go to docs/MEDIA.md, "Recognition accuracy".
package main
