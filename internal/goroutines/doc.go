// Package goroutines counts goroutines for leak checks. Inside a
// testing/synctest bubble it counts only the bubble's own (goroutines
// outside it, such as the test runner's and the race detector's, come and
// go in real time while the bubble's clock stands still); outside a bubble
// it counts all of them.
package goroutines
