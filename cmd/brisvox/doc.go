// Command brisvox is the engine's command line. Until the serving issue
// lands it runs the simulator on the production actor tree:
//
//	brisvox demo          one simulated call, printed turn by turn
//	brisvox sim [--json] [--suite main|tools]
//	                      the scenario and played-text suites, or the
//	                      tool scenarios S1-S6 in two shapes, each
//	                      scenario twice; exit status 1 on any failure
//	brisvox vad [--engine energy|silero] FILE.wav
//	                      the speech segments of a PCM WAV (8, 16, 24 or
//	                      48 kHz, mono or stereo) as JSON lines
//	                      {"start_ms":..., "end_ms":...}
//	brisvox check FILE... agent files (TOML or YAML, see docs/CONFIG.md)
//	                      checked offline: each problem on stderr as
//	                      file:line:col: setting: message (hint: ...),
//	                      "FILE: ok" on stdout for a clean one; exit
//	                      status 1 on any problem, 2 for bad usage
package main
