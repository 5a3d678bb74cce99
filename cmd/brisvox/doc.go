// Command brisvox is the engine's command line:
//
//	brisvox vad [--engine energy|silero] FILE.wav
//	                      the speech segments of a PCM WAV (8, 16, 24 or
//	                      48 kHz, mono or stereo) as JSON lines
//	                      {"start_ms":..., "end_ms":...}
//	brisvox check FILE... agent files (TOML or YAML, see docs/CONFIG.md)
//	                      checked offline: each problem on stderr as
//	                      file:line:col: setting: message (hint: ...),
//	                      "FILE: ok" on stdout for a clean one; exit
//	                      status 1 on any problem, 2 for bad usage
//	brisvox calls [--addr URL] [--token-env NAME] COMMAND
//	                      the operator's command line over a serving
//	                      node's operator API: list [--watch], show ID,
//	                      restart ID STAGE, hangup ID, nodes, drain NODE,
//	                      undrain NODE
//	brisvox records [--addr URL] [--token-env NAME] COMMAND
//	                      the call records (docs/RECORDS.md) over the
//	                      operator API, or a stopped node's SQLite file
//	                      with --db: list, show ID, export, recording ID,
//	                      pause ID, resume ID, erase, audit
//
// The simulator's suites and demo call are the dev command brisvox-sim
// (cmd/brisvox-sim: go tool task sim, go tool task demo): this binary
// links neither the test driver nor the simulator.
package main
