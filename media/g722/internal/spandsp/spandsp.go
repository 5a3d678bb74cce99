//go:build cgo && spandsp

package spandsp

/*
#cgo LDFLAGS: -lspandsp
#include <stdint.h>
#include <spandsp/telephony.h>
#include <spandsp/g722.h>
*/
import "C"

import "unsafe"

// Encoder is a libspandsp G.722 encoder (g722_encode_init(NULL, 64000, 0)).
type Encoder struct{ s *C.g722_encode_state_t }

// NewEncoder makes an encoder; Close frees it.
func NewEncoder() (*Encoder, error) {
	s := C.g722_encode_init(nil, 64000, 0)
	if s == nil {
		return nil, ErrInit
	}
	return &Encoder{s: s}, nil
}

// Encode encodes src (an even number of samples) into dst and returns the
// bytes written.
func (e *Encoder) Encode(dst []byte, src []int16) int {
	if len(src) < 2 || len(dst) < len(src)/2 {
		return 0
	}
	n := len(src) &^ 1
	return int(C.g722_encode(e.s, (*C.uint8_t)(unsafe.Pointer(&dst[0])), (*C.int16_t)(unsafe.Pointer(&src[0])), C.int(n)))
}

// Close frees the state.
func (e *Encoder) Close() { C.g722_encode_free(e.s) }

// Decoder is a libspandsp G.722 decoder (g722_decode_init(NULL, 64000, 0)).
type Decoder struct{ s *C.g722_decode_state_t }

// NewDecoder makes a decoder; Close frees it.
func NewDecoder() (*Decoder, error) {
	s := C.g722_decode_init(nil, 64000, 0)
	if s == nil {
		return nil, ErrInit
	}
	return &Decoder{s: s}, nil
}

// Decode decodes src into dst (at least 2*len(src) samples) and returns
// the samples written.
func (d *Decoder) Decode(dst []int16, src []byte) int {
	if len(src) == 0 || len(dst) < 2*len(src) {
		return 0
	}
	return int(C.g722_decode(d.s, (*C.int16_t)(unsafe.Pointer(&dst[0])), (*C.uint8_t)(unsafe.Pointer(&src[0])), C.int(len(src))))
}

// Close frees the state.
func (d *Decoder) Close() { C.g722_decode_free(d.s) }
