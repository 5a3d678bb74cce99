// Package brisvoxsim is the developer's simulator command, brisvox-sim: the
// scenario suites and the demo call of package sim, run on the production
// actor tree with mock STT, LLM and TTS in virtual time.
//
//	brisvox-sim demo      one simulated call, printed turn by turn
//	brisvox-sim sim [--json] [--suite main|tools]
//	                      the scenario and played-text suites, or the
//	                      tool scenarios S1-S6 in two shapes, each
//	                      scenario twice; exit status 1 on any failure,
//	                      2 for bad usage
//
// The simulator needs a testing/synctest bubble, and synctest.Test needs a
// *testing.T, which only the go test driver makes. So the command is this
// package's test binary: `go tool task sim` and `go tool task demo` build
// it with `go test -c -o bin/brisvox-sim ./cmd/brisvox-sim` and run it with
// the subcommand and its flags. Its TestMain reads them, runs the calls in
// TestProgram's bubble and prints the report on stdout; the test driver's
// own lines (PASS, FAIL) go to stderr. Under plain `go test` (or given
// test flags alone, `bin/brisvox-sim -test.v`) the package tests itself.
// This keeps the test driver and the simulator out of the serving binary,
// cmd/brisvox, which links neither.
//
// The files without _test are the command's parts that need no bubble:
// parsing the arguments (Parse) and writing the report (Report.Write);
// Command.Run, which plays the calls, must be called inside one.
package brisvoxsim
