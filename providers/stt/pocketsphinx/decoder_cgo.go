//go:build cgo

package pocketsphinx

/*
#cgo pkg-config: pocketsphinx sphinxbase
#include <stdlib.h>
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <pocketsphinx.h>
#include <sphinxbase/err.h>

// sphinxbase logs every step of a model load to stderr through one
// process-wide log stream. It is switched off once, here in C, so that no
// Go state holds it; load failures are reported by the Go side.
static pthread_once_t bv_quiet = PTHREAD_ONCE_INIT;
static void bv_silence(void) { err_set_logfp(NULL); }

// bv_new wraps the variadic cmd_ln_init, which cgo cannot call.
static ps_decoder_t *bv_new(const char *hmm, const char *lm, const char *dict) {
	pthread_once(&bv_quiet, bv_silence);
	cmd_ln_t *cfg = cmd_ln_init(NULL, ps_args(), TRUE,
		"-hmm", hmm, "-lm", lm, "-dict", dict,
		"-samprate", "16000", NULL);
	if (cfg == NULL) return NULL;
	ps_decoder_t *ps = ps_init(cfg); // keeps its own reference to cfg
	cmd_ln_free_r(cfg);
	return ps;
}

// bv_trim gives the free pages of glibc's heaps and arenas back to the
// OS; otherwise glibc keeps most of a freed decoder's ~90 MB (many small
// blocks, below the top of the heap). Other C libraries (musl) have no
// malloc_trim: there it does nothing, and bv_can_trim says so.
static int bv_can_trim(void) {
#ifdef __GLIBC__
	return 1;
#else
	return 0;
#endif
}
static int bv_trim(void) {
#ifdef __GLIBC__
	return malloc_trim(0);
#else
	return 0;
#endif
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// cgoEnabled: this build can load libpocketsphinx.
const cgoEnabled = true

// decoder is one libpocketsphinx decoder (ps_decoder_t) with its own copy
// of the acoustic model, dictionary and language model. It is not safe for
// concurrent use: the pool hands it to one session at a time.
type decoder struct {
	ps *C.ps_decoder_t
	// inUtterance mirrors the decoder's state: libpocketsphinx asserts
	// (aborting the process) when it is given audio outside an utterance,
	// so that is refused here with ErrDecode instead.
	inUtterance bool
}

// loadDecoder loads the model files of cfg into a new decoder and starts
// its first utterance.
func loadDecoder(cfg Config) (recognizer, error) {
	hmm, lm, dict := C.CString(cfg.ModelDir), C.CString(cfg.LanguageModel), C.CString(cfg.Dict)
	defer C.free(unsafe.Pointer(hmm))
	defer C.free(unsafe.Pointer(lm))
	defer C.free(unsafe.Pointer(dict))
	ps := C.bv_new(hmm, lm, dict)
	if ps == nil {
		return nil, fmt.Errorf("%w: ModelDir %s, LanguageModel %s, Dict %s", ErrLoad, cfg.ModelDir, cfg.LanguageModel, cfg.Dict)
	}
	d := &decoder{ps: ps}
	if err := d.startUtterance(); err != nil {
		d.free()
		return nil, err
	}
	return d, nil
}

// process decodes pcm (16 kHz PCM16 mono). C reads pcm during the call
// only.
func (d *decoder) process(pcm []int16) error {
	if len(pcm) == 0 {
		return nil
	}
	if !d.inUtterance {
		return fmt.Errorf("%w: audio outside an utterance", ErrDecode)
	}
	n := C.ps_process_raw(d.ps, (*C.int16)(unsafe.Pointer(&pcm[0])), C.size_t(len(pcm)), 0, 0)
	if n < 0 {
		return fmt.Errorf("%w: ps_process_raw returned %d", ErrDecode, int(n))
	}
	return nil
}

// hypothesis is the best hypothesis of the utterance so far ("" for none).
func (d *decoder) hypothesis() string {
	var score C.int32
	h := C.ps_get_hyp(d.ps, &score)
	if h == nil {
		return ""
	}
	return C.GoString(h)
}

// endUtterance ends the utterance and returns its final hypothesis.
func (d *decoder) endUtterance() (string, error) {
	if !d.inUtterance {
		return "", fmt.Errorf("%w: no utterance to end", ErrDecode)
	}
	d.inUtterance = false
	if rc := C.ps_end_utt(d.ps); rc < 0 {
		return "", fmt.Errorf("%w: ps_end_utt returned %d", ErrDecode, int(rc))
	}
	return d.hypothesis(), nil
}

// startUtterance begins a new utterance.
func (d *decoder) startUtterance() error {
	if d.inUtterance {
		return fmt.Errorf("%w: utterance already started", ErrDecode)
	}
	if rc := C.ps_start_utt(d.ps); rc < 0 {
		return fmt.Errorf("%w: ps_start_utt returned %d", ErrDecode, int(rc))
	}
	d.inUtterance = true
	return nil
}

// trimHeap returns the C heap's free memory to the OS after decoders
// were freed (malloc_trim(0) under glibc, nothing elsewhere). It takes
// glibc's arena locks, so it is safe beside running decoders.
func trimHeap() { C.bv_trim() }

// canTrimHeap: trimHeap gives memory back (the C library is glibc).
func canTrimHeap() bool { return C.bv_can_trim() != 0 }

// free releases the decoder's C memory. The decoder must not be used after.
func (d *decoder) free() {
	if d.ps != nil {
		C.ps_free(d.ps)
		d.ps = nil
	}
}
