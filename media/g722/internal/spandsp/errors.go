package spandsp

import "errors"

// ErrInit is returned when libspandsp refuses to make a codec state (it
// only does for an unknown bit rate, so it means a broken install).
var ErrInit = errors.New("spandsp: g722 init failed")
