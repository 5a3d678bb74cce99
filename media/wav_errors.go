package media

import "errors"

// Errors of ReadWAV. Each is wrapped with the detail of the file at hand
// (fmt.Errorf("%w: ...")), so a caller tests the kind with errors.Is and
// shows the message to the user.
var (
	// ErrWAVNotRIFF: the file does not start with a RIFF header.
	ErrWAVNotRIFF = errors.New("media: wav: not a RIFF file")
	// ErrWAVNotWAVE: a RIFF file of another form (AVI, WEBP, ...).
	ErrWAVNotWAVE = errors.New("media: wav: RIFF file is not WAVE")
	// ErrWAVNoFmt: no fmt chunk before the data chunk or the end of file.
	ErrWAVNoFmt = errors.New("media: wav: no fmt chunk")
	// ErrWAVNoData: the fmt chunk is there but no data chunk follows.
	ErrWAVNoData = errors.New("media: wav: no data chunk")
	// ErrWAVNotPCM: the samples are not integer PCM (float, A-law,
	// mu-law, ADPCM, ...); the message names the format code.
	ErrWAVNotPCM = errors.New("media: wav: not PCM")
	// ErrWAVUnsupported: integer PCM in a layout this reader does not take
	// (bits per sample other than 8, 16, 24 or 32; more than two channels).
	ErrWAVUnsupported = errors.New("media: wav: unsupported PCM layout")
	// ErrWAVMalformed: a header field that cannot be right (zero channels or
	// rate, a short fmt chunk, a file that ends inside a header).
	ErrWAVMalformed = errors.New("media: wav: malformed")
	// ErrWAVTooLarge: the file needs more bytes than the caller's limit.
	ErrWAVTooLarge = errors.New("media: wav: larger than the limit")
)
