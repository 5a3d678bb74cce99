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
#include <sphinxbase/ngram_model.h>

// sphinxbase logs every step of a model load to stderr through one
// process-wide log stream. It is switched off once, here in C, so that no
// Go state holds it; load failures are reported by the Go side.
static pthread_once_t bv_quiet = PTHREAD_ONCE_INIT;
static void bv_silence(void) { err_set_logfp(NULL); }

// bv_new wraps the variadic cmd_ln_init, which cgo cannot call. With a
// domain model (domain not NULL) the decoder is made without a search,
// and its one search is the general model lm and the domain model read
// into an interpolated set, weights 1-w and w: a decoder holds one
// language model either way.
static ps_decoder_t *bv_new(const char *hmm, const char *lm, const char *dict, const char *domain, float w) {
	pthread_once(&bv_quiet, bv_silence);
	cmd_ln_t *cfg;
	if (domain == NULL) {
		cfg = cmd_ln_init(NULL, ps_args(), TRUE,
			"-hmm", hmm, "-lm", lm, "-dict", dict,
			"-samprate", "16000", NULL);
	} else {
		cfg = cmd_ln_init(NULL, ps_args(), TRUE,
			"-hmm", hmm, "-dict", dict,
			"-samprate", "16000", NULL);
	}
	if (cfg == NULL) return NULL;
	ps_decoder_t *ps = ps_init(cfg); // keeps its own reference to cfg
	if (ps == NULL || domain == NULL) {
		cmd_ln_free_r(cfg);
		return ps;
	}
	// The models are read without the config: ngram_model_read applies
	// the config's weights to what it read even when that failed (NULL:
	// a segfault on a file it cannot parse), so they are applied here.
	logmath_t *lmath = ps_get_logmath(ps);
	ngram_model_t *models[2];
	models[0] = ngram_model_read(NULL, lm, NGRAM_AUTO, lmath);
	models[1] = ngram_model_read(NULL, domain, NGRAM_ARPA, lmath);
	ngram_model_t *set = NULL;
	if (models[0] != NULL && models[1] != NULL) {
		float32 lw = cmd_ln_float32_r(cfg, "-lw"), wip = cmd_ln_float32_r(cfg, "-wip");
		ngram_model_apply_weights(models[0], lw, wip);
		ngram_model_apply_weights(models[1], lw, wip);
		char *names[2] = {"general", "domain"};
		float32 weights[2] = {1 - w, w};
		set = ngram_model_set_init(cfg, models, names, weights, 2); // owns the models
	}
	if (set == NULL) {
		if (models[0] != NULL) ngram_model_free(models[0]);
		if (models[1] != NULL) ngram_model_free(models[1]);
		cmd_ln_free_r(cfg);
		ps_free(ps);
		return NULL;
	}
	int rc = ps_set_lm(ps, "domain", set); // the search keeps its own reference
	ngram_model_free(set);
	if (rc < 0 || ps_set_search(ps, "domain") < 0) {
		cmd_ln_free_r(cfg);
		ps_free(ps);
		return NULL;
	}
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
	"os"
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
// its first utterance. With a domain model (cfg.domainARPA, built by New)
// the ARPA text is written to a temporary file for sphinxbase to read and
// removed once read.
func loadDecoder(cfg Config) (recognizer, error) {
	hmm, lm, dict := C.CString(cfg.ModelDir), C.CString(cfg.LanguageModel), C.CString(cfg.Dict)
	defer C.free(unsafe.Pointer(hmm))
	defer C.free(unsafe.Pointer(lm))
	defer C.free(unsafe.Pointer(dict))
	var domain *C.char
	if len(cfg.domainARPA) > 0 {
		path, err := writeTemp(cfg.domainARPA)
		if err != nil {
			return nil, fmt.Errorf("%w: the domain model: %v", ErrLoad, err)
		}
		defer os.Remove(path)
		domain = C.CString(path)
		defer C.free(unsafe.Pointer(domain))
	}
	ps := C.bv_new(hmm, lm, dict, domain, C.float(cfg.DomainWeight))
	if ps == nil {
		return nil, fmt.Errorf("%w: ModelDir %s, LanguageModel %s, Dict %s, domain model %v", ErrLoad, cfg.ModelDir, cfg.LanguageModel, cfg.Dict, domain != nil)
	}
	d := &decoder{ps: ps}
	if err := d.startUtterance(); err != nil {
		d.free()
		return nil, err
	}
	return d, nil
}

// writeTemp writes text to a new temporary file and returns its path.
func writeTemp(text []byte) (string, error) {
	f, err := os.CreateTemp("", "brisvox-domain-*.arpa")
	if err != nil {
		return "", err
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
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
