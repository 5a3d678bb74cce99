package loosetest

import "errors"

// Sentinel errors of the checks. Every failure of a Step wraps exactly one
// of them, as fmt.Errorf("%w: detail", ErrX); the detail holds counts,
// indexes and adapter errors, never the model's text or tool arguments.
var (
	// ErrStream: Stream, or a Recv before the end, returned an error.
	ErrStream = errors.New("loose: the stream failed")
	// ErrNoDone: the stream ended (io.EOF) without an LLMDone event.
	ErrNoDone = errors.New("loose: the stream ended without LLMDone")
	// ErrAfterDone: an event came after LLMDone, or io.EOF did not follow
	// it and stay.
	ErrAfterDone = errors.New("loose: LLMDone was not followed by io.EOF")
	// ErrNoStopReason: LLMDone carried no StopReason.
	ErrNoStopReason = errors.New("loose: LLMDone without a stop reason")
	// ErrUnknownKind: an event of a kind the interface does not define.
	ErrUnknownKind = errors.New("loose: event of unknown kind")
	// ErrText: the answer's text is empty or not valid UTF-8.
	ErrText = errors.New("loose: bad answer text")
	// ErrUsage: a usage report with a negative count, or whose input or
	// output count is not positive.
	ErrUsage = errors.New("loose: bad usage report")
	// ErrCall: a tool call that does not assemble, is not offered, or
	// whose arguments are not a JSON object; or a call where none was
	// offered.
	ErrCall = errors.New("loose: bad tool call")
	// ErrRunaway: the stream went over the event or byte bound.
	ErrRunaway = errors.New("loose: the stream does not end")
	// ErrWarm: Warm failed.
	ErrWarm = errors.New("loose: warm-up failed")
	// ErrCancel: after the context was cancelled, Recv did not return the
	// context's error, or not within the bound.
	ErrCancel = errors.New("loose: cancellation not honoured")
	// ErrLeak: goroutines started by the stream outlived it.
	ErrLeak = errors.New("loose: goroutines left behind")
	// ErrHang: the step did not end by its deadline; the stream was
	// closed by the watchdog.
	ErrHang = errors.New("loose: the step did not end by its deadline")
)

// ErrInvalidConfig: a Config with a negative bound.
var ErrInvalidConfig = errors.New("loose: invalid config")
