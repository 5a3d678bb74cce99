package records

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
)

// The kinds of the journals' entries. The records journal holds R (a
// finished record's JSON, acked once it is in the store); the live-call
// journal holds B (a call began: its record's fixed fields), C (a
// checkpoint: the redacted partial record) and E (the call's record is in
// the records journal), all of a call acked after its E.
const (
	kindRecord     byte = 'R'
	kindBegin      byte = 'B'
	kindCheckpoint byte = 'C'
	kindEnd        byte = 'E'
)

// Service is the node's records service: it builds each call's record
// from its live events (Begin, Call.Event, Call.End), journals it, puts
// it into the store with retries, hands it to the sinks, keeps a live-call
// journal for crash recovery, sweeps by retention and erases on request.
type Service struct {
	cfg   Config
	store Store
	recs  Journal // finished records
	liveJ Journal // live calls
	sinks []Sink
	log   zerolog.Logger

	// queue holds ended calls waiting for the journal; live, calls
	// waiting for a begin entry or a checkpoint.
	queue chan *Call
	live  chan *Call

	// gate orders End's hand-over against Close: after Close took it,
	// no record enters the queue unseen (taken once per call, not per
	// event).
	gate    sync.RWMutex
	closed  atomic.Bool
	started atomic.Bool
	stop    chan struct{}
	// ctx is cancelled when Close gives up waiting (its context ended).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	pend pending
	acks ackQueue
	st   stats
}

// New makes the records service over store and two journals: records
// (finished records until they are in the store) and live (calls in
// progress, for recovery after a crash). Recover, then Start.
func New(cfg Config, store Store, records, live Journal, sinks ...Sink) (*Service, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if store == nil || records == nil || live == nil {
		return nil, fmt.Errorf("%w: the records service needs a store, a records journal and a live-call journal", ErrInvalidConfig)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Service{
		cfg: cfg, store: store, recs: records, liveJ: live, sinks: sinks, log: cfg.Log,
		queue: make(chan *Call, cfg.QueueSize), live: make(chan *Call, cfg.CheckpointQueue),
		stop: make(chan struct{}), ctx: ctx, cancel: cancel,
	}
	s.pend.init(cfg.QueueSize * 4)
	s.acks.wake = make(chan struct{}, 1)
	return s, nil
}

// Store is the service's store, for reading records.
func (s *Service) Store() Store { return s.store }

// Start starts the writer, the store's putter and the sweeper. Close
// stops them and waits.
func (s *Service) Start() {
	s.gate.Lock()
	defer s.gate.Unlock()
	if s.closed.Load() || !s.started.CompareAndSwap(false, true) {
		return
	}
	journaled := make(chan struct{})
	put := make(chan struct{})
	s.wg.Add(4)
	go func() {
		defer s.wg.Done()
		defer close(journaled)
		s.journalLoop()
	}()
	go func() {
		defer s.wg.Done()
		defer close(put)
		s.putLoop(journaled)
	}()
	go func() {
		defer s.wg.Done()
		s.ackLoop(put)
	}()
	go func() {
		defer s.wg.Done()
		s.sweepLoop()
	}()
}

// Close writes every queued record into the journal, puts what the store
// takes now (what it does not is replayed at the next start), and stops.
// It returns ctx's error if ctx ended first.
func (s *Service) Close(ctx context.Context) error {
	s.gate.Lock()
	was := s.closed.Swap(true)
	s.gate.Unlock()
	if was {
		return ErrClosed
	}
	close(s.stop)
	if !s.started.Load() {
		// Never started: journal what was queued here; the store gets it
		// at the next start's replay.
		s.drain()
		s.cancel()
		return nil
	}
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		s.cancel()
		<-done
		err = fmt.Errorf("records: close: %w", ctx.Err())
	}
	s.cancel()
	return err
}

// enqueue hands an ended call to the writer, never blocking.
func (s *Service) enqueue(c *Call) {
	s.gate.RLock()
	defer s.gate.RUnlock()
	if s.closed.Load() {
		s.dropRecord(c, ErrClosed)
		return
	}
	select {
	case s.queue <- c:
		s.st.queued.Add(1)
	default:
		s.dropRecord(c, errors.New("the records queue is full"))
	}
}

func (s *Service) dropRecord(c *Call, err error) {
	s.st.droppedRecords.Add(1)
	s.log.Error().Str("call_id", c.head.CallID).Err(err).Msg("records: call record dropped (the live-call journal may still recover it at the next start)")
}

// stats are the service's counters.
type stats struct {
	begun, queued, written, duplicates, replayed, recovered atomic.Uint64
	putRetries, putFailures, journalFailures, sinkFailures  atomic.Uint64
	droppedRecords, droppedCheckpoints, checkpoints         atomic.Uint64
	liveFailures, corrupt                                   atomic.Uint64
	sweeps, sweepFailures                                   atomic.Uint64
	sweptRecords, sweptTranscripts, sweptToolData           atomic.Uint64
	sweptNumbers, sweptRecordings, recordingRemoveFailures  atomic.Uint64
	erasures, erased                                        atomic.Uint64
}

// Stats are the service's counters: begun (calls), queued (records handed
// to the writer), written (records the store took), duplicates (Puts the
// store already had: replays), replayed (records journal entries
// replayed at start), recovered (calls live at a crash, recorded
// node_crashed), put_retries and put_failures (failed Puts, each retried),
// journal_failures, sink_failures, dropped_records, dropped_checkpoints,
// checkpoints, live_failures (live-journal writes that failed), corrupt
// (journal entries that did not decode), sweeps, sweep_failures,
// swept_records, swept_transcripts, swept_tool_data, swept_numbers,
// swept_recordings, recording_remove_failures, erasures, erased, and the
// gauges waiting (records in the queue) and pending_puts.
func (s *Service) Stats() map[string]uint64 {
	st := &s.st
	return map[string]uint64{
		"begun": st.begun.Load(), "queued": st.queued.Load(), "written": st.written.Load(),
		"duplicates": st.duplicates.Load(), "replayed": st.replayed.Load(), "recovered": st.recovered.Load(),
		"put_retries": st.putRetries.Load(), "put_failures": st.putFailures.Load(),
		"journal_failures": st.journalFailures.Load(), "sink_failures": st.sinkFailures.Load(),
		"dropped_records": st.droppedRecords.Load(), "dropped_checkpoints": st.droppedCheckpoints.Load(),
		"checkpoints": st.checkpoints.Load(), "live_failures": st.liveFailures.Load(), "corrupt": st.corrupt.Load(),
		"sweeps": st.sweeps.Load(), "sweep_failures": st.sweepFailures.Load(),
		"swept_records": st.sweptRecords.Load(), "swept_transcripts": st.sweptTranscripts.Load(),
		"swept_tool_data": st.sweptToolData.Load(), "swept_numbers": st.sweptNumbers.Load(),
		"swept_recordings": st.sweptRecordings.Load(), "recording_remove_failures": st.recordingRemoveFailures.Load(),
		"erasures": st.erasures.Load(), "erased": st.erased.Load(),
		"waiting": uint64(len(s.queue)), "pending_puts": uint64(s.pend.len()),
	}
}
