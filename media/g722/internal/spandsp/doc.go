// Package spandsp is the test reference of media/g722: libspandsp's G.722
// codec (64 kbit/s, 16 kHz, unpacked) through cgo, so the pure Go codec is
// checked sample for sample against an independent implementation. It is
// built only with the build tag spandsp (and cgo); without it the package
// is empty, so the default build needs no C library. Nothing but tests
// imports it.
package spandsp
