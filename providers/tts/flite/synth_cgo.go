//go:build cgo

package flite

/*
#cgo LDFLAGS: -lflite_cmu_us_slt -lflite_cmu_us_rms -lflite_cmu_us_awb -lflite_cmu_us_kal16 -lflite_cmu_us_kal -lflite_usenglish -lflite_cmulex -lflite -lm
#include <stdlib.h>
#include <setjmp.h>
#include <flite/flite.h>

cst_voice *register_cmu_us_slt(const char *voxdir);
cst_voice *register_cmu_us_rms(const char *voxdir);
cst_voice *register_cmu_us_awb(const char *voxdir);
cst_voice *register_cmu_us_kal16(const char *voxdir);
cst_voice *register_cmu_us_kal(const char *voxdir);

// Every entry point sets cst_errjmp around its libflite calls: the
// library's errors call exit(-1) unless a jump buffer is set, and longjmp
// to it when one is. The jump crosses C frames only (no Go callbacks).

static cst_voice *bv_register(int which) {
	jmp_buf jb;
	jmp_buf *old = cst_errjmp;
	cst_voice *volatile v = NULL;
	if (setjmp(jb)) {
		cst_errjmp = old;
		return NULL;
	}
	cst_errjmp = &jb;
	flite_init();
	switch (which) {
	case 0: v = register_cmu_us_slt(NULL); break;
	case 1: v = register_cmu_us_rms(NULL); break;
	case 2: v = register_cmu_us_awb(NULL); break;
	case 3: v = register_cmu_us_kal16(NULL); break;
	case 4: v = register_cmu_us_kal(NULL); break;
	}
	cst_errjmp = old;
	return v;
}

typedef struct {
	cst_utterance *utt;
	const short *pcm;
	int n;
	int ntok;
	int *starts;   // malloc'd, ntok entries: sample of each token's speech, -1 for none
	int lead_end;  // end of the leading pause, in samples
	int tail_start; // start of the trailing pause, in samples
} bv_result;

static int bv_sample(float t, int rate) {
	return (int)(t * (float)rate + 0.5f);
}

// bv_synth synthesizes text with v, resampled to rate, and reads the start
// of every token from the Token, Word, SylStructure and Segment relations.
static int bv_synth(cst_voice *v, const char *text, int rate, bv_result *r) {
	jmp_buf jb;
	jmp_buf *old = cst_errjmp;
	if (setjmp(jb)) {
		cst_errjmp = old;
		return -1;
	}
	cst_errjmp = &jb;
	// The clustergen voices excite unvoiced sounds with libc's rand():
	// a fixed seed per call makes a text's audio the same every time.
	srand(1);
	r->utt = flite_synth_text(text, v);
	cst_wave *w = r->utt ? utt_wave(r->utt) : NULL;
	if (w == NULL) {
		cst_errjmp = old;
		return -1;
	}
	if (w->sample_rate != rate)
		cst_wave_resample(w, rate);
	r->pcm = w->samples;
	r->n = w->num_samples;

	cst_relation *segs = utt_relation(r->utt, "Segment");
	cst_item *first = segs ? relation_head(segs) : NULL;
	cst_item *last = segs ? relation_tail(segs) : NULL;
	r->lead_end = 0;
	r->tail_start = r->n;
	if (first && cst_streq(item_feat_string(first, "name"), "pau"))
		r->lead_end = bv_sample(item_feat_float(first, "end"), rate);
	if (last && cst_streq(item_feat_string(last, "name"), "pau") && item_prev(last))
		r->tail_start = bv_sample(item_feat_float(item_prev(last), "end"), rate);

	cst_relation *toks = utt_relation(r->utt, "Token");
	int ntok = 0;
	for (cst_item *t = toks ? relation_head(toks) : NULL; t; t = item_next(t))
		ntok++;
	r->ntok = ntok;
	r->starts = ntok ? (int *)malloc(sizeof(int) * ntok) : NULL;
	int k = 0;
	for (cst_item *t = toks ? relation_head(toks) : NULL; t && k < ntok; t = item_next(t), k++) {
		r->starts[k] = -1;
		for (cst_item *d = item_daughter(t); d; d = item_next(d)) {
			cst_item *seg = flite_path_to_item(d, "R:SylStructure.daughter1.daughter1.R:Segment");
			if (seg == NULL)
				continue;
			cst_item *p = item_prev(seg);
			r->starts[k] = p ? bv_sample(item_feat_float(p, "end"), rate) : 0;
			break;
		}
	}
	cst_errjmp = old;
	return 0;
}

static void bv_free(bv_result *r) {
	if (r->utt)
		delete_utterance(r->utt);
	free(r->starts);
	r->utt = NULL;
	r->starts = NULL;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// lib serializes every call into libflite. The library keeps process-wide
// state: the error jump buffer cst_errjmp, and one voice object per voice
// that every register_cmu_us_* call returns, which synthesis reads and
// whose lexicon caches it fills; the clustergen voices also draw on libc's
// rand(), which each call reseeds. It documents no thread safety, so one
// synthesis runs at a time in the process (at a real-time factor near
// 0.02, one core serves about 50 live contexts). voices caches the
// registered voices for the life of the process, as libflite does.
var lib struct {
	mu     sync.Mutex
	voices map[string]*C.cst_voice
}

// voice is a libflite voice linked into the binary.
type voice struct {
	v *C.cst_voice
}

// loadVoice registers the named voice once per process.
func loadVoice(name string) (*voice, error) {
	var which C.int
	switch name {
	case "slt":
		which = 0
	case "rms":
		which = 1
	case "awb":
		which = 2
	case "kal16":
		which = 3
	case "kal":
		which = 4
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownVoice, name)
	}
	lib.mu.Lock()
	defer lib.mu.Unlock()
	if v := lib.voices[name]; v != nil {
		return &voice{v: v}, nil
	}
	v := C.bv_register(which)
	if v == nil {
		return nil, fmt.Errorf("%w: registering voice %q", ErrSynthesis, name)
	}
	if lib.voices == nil {
		lib.voices = map[string]*C.cst_voice{}
	}
	lib.voices[name] = v
	return &voice{v: v}, nil
}

// synthesize speaks text (ASCII words joined by single spaces) at rate.
// The audio is copied out of libflite's memory.
func (v *voice) synthesize(text string, rate int) (utterance, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	var r C.bv_result
	lib.mu.Lock()
	defer lib.mu.Unlock()
	defer C.bv_free(&r)
	if C.bv_synth(v.v, ctext, C.int(rate), &r) != 0 {
		return utterance{}, fmt.Errorf("%w: libflite error on a piece of %d bytes", ErrSynthesis, len(text))
	}
	u := utterance{
		pcm:       make([]int16, int(r.n)),
		starts:    make([]int, int(r.ntok)),
		leadEnd:   int(r.lead_end),
		tailStart: int(r.tail_start),
	}
	if r.n > 0 {
		copy(u.pcm, unsafe.Slice((*int16)(unsafe.Pointer(r.pcm)), int(r.n)))
	}
	if r.ntok > 0 {
		for i, s := range unsafe.Slice((*C.int)(unsafe.Pointer(r.starts)), int(r.ntok)) {
			u.starts[i] = int(s)
		}
	}
	return u, nil
}
