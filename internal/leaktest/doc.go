// Package leaktest (test support) counts goroutines for leak checks. Inside a
// testing/synctest bubble it counts only the bubble's own (goroutines
// outside it, such as the test runner's and the race detector's, come and
// go in real time while the bubble's clock stands still), including one
// the runtime has taken out of the bubble for a moment to help the garbage
// collector (known by the goroutine that started it, or by its wait on the
// collector; see Snapshot); outside a bubble it counts all of them.
package leaktest
