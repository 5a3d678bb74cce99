// Command brisvox is the engine's command line. Until the serving issue
// lands it runs the simulator on the production actor tree:
//
//	brisvox demo          one simulated call, printed turn by turn
//	brisvox sim [--json]  the scenario and played-text suites, each
//	                      scenario twice; exit status 1 on any failure
package main
