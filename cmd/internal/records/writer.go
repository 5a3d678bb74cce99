package records

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"
)

// The store's retry: a failed Put is tried again after 100 ms, doubling
// to 30 s, for as long as the service runs.
const (
	putBackoffMin = 100 * time.Millisecond
	putBackoffMax = 30 * time.Second
	// putTimeout bounds one Put, so a hung database is a failed attempt.
	putTimeout = 30 * time.Second
)

// liveEntry is the payload of a live-call journal entry: a begin entry's
// record holds the call's fixed fields, a checkpoint's everything known
// at At (redacted), an end entry only the call id.
type liveEntry struct {
	CallID string    `json:"call_id"`
	At     time.Time `json:"at"`
	Record *Record   `json:"record,omitempty"`
}

// journalLoop is the writer goroutine: it journals ended calls' records
// (first) and the live calls' begin entries and checkpoints, and hands
// each journaled record to the putter. It drains both queues at Close.
func (s *Service) journalLoop() {
	for {
		select {
		case c := <-s.queue:
			s.journalRecords(c)
			continue
		default:
		}
		select {
		case c := <-s.queue:
			s.journalRecords(c)
		case c := <-s.live:
			s.journalLives(c)
		case <-s.stop:
			s.drain()
			return
		}
	}
}

// drain journals what the queues hold now.
func (s *Service) drain() {
	for {
		select {
		case c := <-s.queue:
			s.journalRecords(c)
		case c := <-s.live:
			s.journalLives(c)
		default:
			return
		}
	}
}

// maxBatch bounds the records journaled together.
const maxBatch = 64

// journalRecords journals first and the records queued behind it (up to
// maxBatch), their appends concurrent so that the journal's group commit
// makes them durable with one sync; then each call is closed in the
// live-call journal (concurrently too) and its record handed to the
// putter.
func (s *Service) journalRecords(first *Call) {
	batch := []*Call{first}
fill:
	for len(batch) < maxBatch {
		select {
		case c := <-s.queue:
			batch = append(batch, c)
		default:
			break fill
		}
	}
	type item struct {
		c       *Call
		id      string
		payload []byte
		seq     uint64
		err     error
	}
	items := make([]item, 0, len(batch))
	for _, c := range batch {
		if p, ok := s.buildRecord(c); ok {
			items = append(items, item{c: c, id: c.head.CallID, payload: p})
		}
	}
	var wg sync.WaitGroup
	for i := range items {
		it := &items[i]
		wg.Go(func() { it.seq, it.err = s.recs.Append(kindRecord, it.payload) })
	}
	wg.Wait()
	for i := range items {
		if it := &items[i]; it.err == nil {
			wg.Go(func() { s.endLive(it.c) })
		}
	}
	wg.Wait()
	for _, it := range items {
		if it.err != nil {
			// Not durable: the store may still take it from memory, and
			// the live-call journal still holds the call for the next
			// start.
			s.st.journalFailures.Add(1)
			s.log.Error().Str("call_id", it.id).Err(it.err).Msg("records: journaling the call record failed")
			it.seq = 0
		}
		s.pend.push(it.seq, it.payload)
	}
}

// buildRecord builds an ended call's record, applies the policies and the
// redactor, and encodes it.
func (s *Service) buildRecord(c *Call) ([]byte, bool) {
	r, _, recording := c.snapshot()
	if recording != nil {
		r.Recording = recording()
	}
	s.finish(r)
	payload, err := json.Marshal(r)
	if err != nil {
		s.st.journalFailures.Add(1)
		s.log.Error().Str("call_id", r.CallID).Err(err).Msg("records: the call record does not encode")
		return nil, false
	}
	return payload, true
}

// endLive writes the call's end entry in the live-call journal and acks
// its entries: its record is durable in the records journal.
func (s *Service) endLive(c *Call) {
	if !c.begun {
		return
	}
	payload, _ := json.Marshal(liveEntry{CallID: c.head.CallID, At: time.Now()})
	seq, err := s.liveJ.Append(kindEnd, payload)
	if err != nil {
		s.st.liveFailures.Add(1)
		s.log.Error().Str("call_id", c.head.CallID).Err(err).Msg("records: the live-call journal's end entry failed (the call is recovered at the next start; the store keeps one record)")
		return
	}
	var wg sync.WaitGroup // the acks concurrent: they share a sync
	for _, q := range []uint64{c.beginSeq, c.ckptSeq, seq} {
		if q == 0 {
			continue
		}
		wg.Go(func() {
			if err := s.liveJ.Ack(q); err != nil {
				s.st.liveFailures.Add(1)
				s.log.Error().Str("call_id", c.head.CallID).Err(err).Msg("records: acking the live-call journal failed")
			}
		})
	}
	wg.Wait()
	c.beginSeq, c.ckptSeq = 0, 0
}

// journalLives journals first's live entries and those of the calls
// queued behind it (up to maxBatch), concurrently: one sync of the
// journal's group commit for them all. A call is in the queue once, so
// no two of these touch one call.
func (s *Service) journalLives(first *Call) {
	var wg sync.WaitGroup
	wg.Go(func() { s.journalLive(first) })
fill:
	for n := 1; n < maxBatch; n++ {
		select {
		case c := <-s.live:
			wg.Go(func() { s.journalLive(c) })
		default:
			break fill
		}
	}
	wg.Wait()
}

// journalLive writes a live call's begin entry (once) and the checkpoint
// it asked for; the checkpoint before it is acked.
func (s *Service) journalLive(c *Call) {
	c.mu.Lock()
	c.liveQueued = false
	ended, want := c.ended, c.ckpt
	c.ckpt = false
	c.mu.Unlock()
	if ended {
		return // its record says it all
	}
	id := c.head.CallID
	if !c.begun {
		head := c.head // fixed after Begin
		s.finish(&head)
		payload, err := json.Marshal(liveEntry{CallID: id, At: time.Now(), Record: &head})
		if err == nil {
			var seq uint64
			if seq, err = s.liveJ.Append(kindBegin, payload); err == nil {
				c.beginSeq, c.begun = seq, true
			}
		}
		if err != nil {
			s.st.liveFailures.Add(1)
			s.log.Error().Str("call_id", id).Err(err).Msg("records: the live-call journal's begin entry failed (tried again at the next checkpoint)")
			return
		}
	}
	if !want {
		return
	}
	r, final, _ := c.snapshot()
	if final {
		return
	}
	s.finish(r)
	payload, err := json.Marshal(liveEntry{CallID: id, At: time.Now(), Record: r})
	if err == nil {
		var seq uint64
		if seq, err = s.liveJ.Append(kindCheckpoint, payload); err == nil {
			s.st.checkpoints.Add(1)
			if c.ckptSeq != 0 {
				if err := s.liveJ.Ack(c.ckptSeq); err != nil {
					s.st.liveFailures.Add(1)
					s.log.Error().Str("call_id", id).Err(err).Msg("records: acking the live-call journal failed")
				}
			}
			c.ckptSeq = seq
		}
	}
	if err != nil {
		s.st.liveFailures.Add(1)
		s.log.Error().Str("call_id", id).Err(err).Msg("records: the live-call journal's checkpoint failed")
	}
}

// putLoop puts journaled records into the store, in order, retrying a
// failed Put with backoff; each stored record goes to the sinks and is
// acked in the journal. Journaling never waits for it. After Close it
// puts what the store takes and stops at the first failure (the rest is
// in the journal for the next start).
func (s *Service) putLoop(journaled <-chan struct{}) {
	backoff := putBackoffMin
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		it, ok := s.pend.front()
		if !ok {
			select {
			case <-s.pend.wake:
			case <-journaled:
				if s.pend.len() == 0 {
					return
				}
			}
			continue
		}
		if it.payload == nil {
			if err := s.refill(); err != nil {
				if !s.wait(&timer, &backoff) {
					return
				}
			}
			continue
		}
		r := new(Record)
		if err := json.Unmarshal(it.payload, r); err != nil {
			s.st.corrupt.Add(1)
			s.log.Error().Err(err).Msg("records: a journaled record does not decode; skipped")
			s.ack(it.seq, "")
			s.pend.pop()
			continue
		}
		ctx, cancel := context.WithTimeout(s.ctx, putTimeout)
		inserted, err := s.store.Put(ctx, r)
		cancel()
		if err != nil {
			s.st.putFailures.Add(1)
			s.log.Warn().Str("call_id", r.CallID).Err(err).Dur("retry_in", backoff).Msg("records: the store did not take the record; it is kept in the journal and retried")
			if !s.wait(&timer, &backoff) {
				return
			}
			s.st.putRetries.Add(1)
			continue
		}
		backoff = putBackoffMin
		if inserted {
			s.st.written.Add(1)
		} else {
			s.st.duplicates.Add(1)
		}
		// The sinks before the ack: a crash between them replays the
		// record and delivers it again (at least once; the webhook's
		// idempotency key tells a repeat).
		for _, k := range s.sinks {
			if err := k.Deliver(r); err != nil {
				s.st.sinkFailures.Add(1)
				s.log.Error().Str("call_id", r.CallID).Err(err).Msg("records: a sink did not take the record")
			}
		}
		s.acks.add(it.seq, r.CallID)
		s.pend.pop()
	}
}

// ackLoop acks the stored records in the records journal, those that
// came in together concurrently (one sync of the journal's acks for
// them), so the putter never waits for a sync. It stops once the putter
// has and every ack is done. An ack lost to a crash only means the
// record is put again at the next start (no duplicate).
func (s *Service) ackLoop(put <-chan struct{}) {
	for {
		batch := s.acks.take()
		if len(batch) == 0 {
			select {
			case <-s.acks.wake:
				continue
			case <-put:
				if batch = s.acks.take(); len(batch) == 0 {
					return
				}
			}
		}
		var wg sync.WaitGroup
		for _, a := range batch {
			wg.Go(func() { s.ack(a.seq, a.callID) })
		}
		wg.Wait()
	}
}

// ackQueue holds the records waiting for their ack.
type ackQueue struct {
	mu   sync.Mutex
	q    []ackItem
	wake chan struct{}
}

type ackItem struct {
	seq    uint64
	callID string
}

func (a *ackQueue) add(seq uint64, callID string) {
	if seq == 0 {
		return
	}
	a.mu.Lock()
	a.q = append(a.q, ackItem{seq, callID})
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// take returns what waits, at most maxBatch.
func (a *ackQueue) take() []ackItem {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := min(len(a.q), maxBatch)
	out := append([]ackItem(nil), a.q[:n]...)
	a.q = append(a.q[:0], a.q[n:]...)
	return out
}

// wait sleeps the backoff and doubles it; false when the service is
// closing (what is left is replayed at the next start).
func (s *Service) wait(timer **time.Timer, backoff *time.Duration) bool {
	select {
	case <-s.stop:
		return false
	default:
	}
	if *timer == nil {
		*timer = time.NewTimer(*backoff)
	} else {
		(*timer).Reset(*backoff)
	}
	*backoff = min(2**backoff, putBackoffMax)
	select {
	case <-(*timer).C:
		return true
	case <-s.stop:
		return false
	}
}

func (s *Service) ack(seq uint64, callID string) {
	if seq == 0 {
		return
	}
	if err := s.recs.Ack(seq); err != nil {
		s.st.journalFailures.Add(1)
		s.log.Error().Str("call_id", callID).Err(err).Msg("records: acking the records journal failed (the record is put again at the next start: no duplicate)")
	}
}

// refill reads back from the journal the payloads of pending records kept
// only by their sequence number (more were waiting than memory keeps).
func (s *Service) refill() error {
	want := s.pend.missing()
	got := make(map[uint64][]byte, len(want))
	err := s.recs.Replay(func(seq uint64, kind byte, payload []byte) error {
		if _, ok := want[seq]; ok && kind == kindRecord {
			got[seq] = bytes.Clone(payload)
		}
		return nil
	})
	if err != nil {
		s.st.journalFailures.Add(1)
		s.log.Error().Err(err).Msg("records: reading waiting records back from the journal failed; retried")
		return err
	}
	lost := s.pend.fill(want, got)
	if lost > 0 {
		s.st.corrupt.Add(uint64(lost))
		s.log.Error().Int("records", lost).Msg("records: waiting records are no longer in the journal; skipped")
	}
	return nil
}

// pending is the putter's list of journaled records, in journal order.
// At most keep of them hold their payload in memory; the others only
// their sequence number, and are read back from the journal when their
// turn comes.
type pending struct {
	mu    sync.Mutex
	items []pendItem
	head  int
	keep  int
	inMem int
	wake  chan struct{}
}

type pendItem struct {
	seq     uint64
	payload []byte
}

func (p *pending) init(keep int) {
	p.keep = keep
	p.wake = make(chan struct{}, 1)
}

func (p *pending) push(seq uint64, payload []byte) {
	p.mu.Lock()
	if p.inMem >= p.keep && seq != 0 {
		payload = nil
	} else {
		p.inMem++
	}
	p.items = append(p.items, pendItem{seq: seq, payload: payload})
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *pending) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.items) - p.head
}

func (p *pending) front() (pendItem, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.head == len(p.items) {
		return pendItem{}, false
	}
	return p.items[p.head], true
}

func (p *pending) pop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.items[p.head].payload != nil {
		p.inMem--
	}
	p.items[p.head] = pendItem{}
	p.head++
	if p.head == len(p.items) {
		p.items, p.head = p.items[:0], 0
	} else if p.head > 1024 && p.head*2 > len(p.items) {
		n := copy(p.items, p.items[p.head:])
		clear(p.items[n:])
		p.items, p.head = p.items[:n], 0
	}
}

// missing names the first items without their payload, as many as memory
// may keep now.
func (p *pending) missing() map[uint64]struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	room := max(p.keep-p.inMem, 1)
	out := make(map[uint64]struct{}, room)
	for _, it := range p.items[p.head:] {
		if len(out) == room {
			break
		}
		if it.payload == nil {
			out[it.seq] = struct{}{}
		}
	}
	return out
}

// fill gives the wanted items their payloads; those the journal no longer
// had are removed, and counted.
func (p *pending) fill(want map[uint64]struct{}, got map[uint64][]byte) (lost int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.items[:p.head]
	for _, it := range p.items[p.head:] {
		if _, ok := want[it.seq]; ok && it.payload == nil {
			if b, ok := got[it.seq]; ok {
				it.payload = b
				p.inMem++
			} else {
				lost++
				continue
			}
		}
		kept = append(kept, it)
	}
	clear(p.items[len(kept):])
	p.items = kept
	return lost
}
