// Package bubble runs functions inside a testing/synctest bubble from an
// ordinary program, so that cmd/brisvox can run the simulator's suites in
// virtual time (deterministic, a ten-minute call in milliseconds) without
// the go test driver.
package bubble
