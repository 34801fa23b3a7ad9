package sim

import (
	"errors"
	"fmt"
	"time"
)

// Handler receives each event in (time, sequence) order. It may schedule new
// events on the kernel but must never schedule one in the past. ev points
// into the kernel's queue and is valid only during the call: a handler that
// keeps the event keeps a copy (*ev).
//
// A pointer, not a copy: an Event has more fields than the compiler keeps
// in registers, so passing one by value wrote it to the stack and read it
// back on every dispatch (docs/PERFORMANCE.md, point 5, third pass).
type Handler func(ev *Event)

// Config sets up a Kernel.
type Config struct {
	// Handler is called for every dispatched event.
	Handler Handler
	// RecordStream keeps every dispatched event so that two runs can be
	// compared event by event (see FirstDifference). It costs memory
	// proportional to the run; the rolling hash is kept either way.
	RecordStream bool
	// Capacity preallocates room for that many pending events.
	Capacity int
}

// Kernel is the discrete-event loop of one run. It is single-threaded by
// design: actors are state machines it steps, never goroutines.
type Kernel struct {
	now     Time
	queue   eventQueue // also counts what was scheduled and the high-water mark
	handler Handler
	hash    uint64
	stop    bool

	record bool
	stream []Event

	dispatched uint64
}

// New returns a kernel at virtual time 0.
func New(cfg Config) *Kernel {
	k := &Kernel{handler: cfg.Handler, record: cfg.RecordStream, hash: hashSeed}
	if cfg.Capacity > 0 {
		// The equal-time bucket is the busiest; the others grow to their
		// own high-water marks as the run needs them.
		k.queue.buckets[0] = make([]Event, 0, cfg.Capacity)
	}
	return k
}

// Reset makes k a kernel at virtual time 0 with cfg, as New(cfg) would,
// keeping its buffers: a worker that simulates seed after seed allocates
// no kernel per seed. The previous run's Stream is overwritten.
func (k *Kernel) Reset(cfg Config) {
	q := k.queue.buckets
	for i := range q {
		q[i] = q[i][:0]
	}
	*k = Kernel{handler: cfg.Handler, record: cfg.RecordStream, hash: hashSeed, stream: k.stream[:0]}
	k.queue.buckets = q
	if b := &k.queue.buckets; cfg.Capacity > 0 && cap(b[0]) < cfg.Capacity {
		// Buckets trade slices with bucket 0 as a run goes, so the room
		// New gave it may be in another (empty) bucket now.
		for i := 1; i < len(b); i++ {
			if cap(b[i]) >= cfg.Capacity {
				b[0], b[i] = b[i], b[0]
				return
			}
		}
		b[0] = make([]Event, 0, cfg.Capacity)
	}
}

// SetHandler replaces the handler; models that need the kernel to build
// themselves set it after New.
func (k *Kernel) SetHandler(h Handler) { k.handler = h }

// Now returns the current virtual time: the time of the event being
// dispatched, or of the last one.
func (k *Kernel) Now() Time { return k.now }

// Schedule enqueues an event at an absolute virtual time, which must not be
// before Now: event times never go backwards.
func (k *Kernel) Schedule(at Time, kind, actor uint32, payload uint64) {
	k.queue.add(at, kind, actor, payload, 0, k.now)
}

// ScheduleRef is Schedule with a Ref handle for the model.
//
// It, Schedule, After and AfterRef are each one call into the queue,
// small enough to inline into a handler: the queue numbers the event,
// keeps the high-water mark and checks the time against now
// (eventQueue.add), one call per scheduled event instead of two.
func (k *Kernel) ScheduleRef(at Time, kind, actor uint32, payload uint64, ref uint32) {
	k.queue.add(at, kind, actor, payload, ref, k.now)
}

// After enqueues an event d after Now; a negative d is a model bug.
func (k *Kernel) After(d time.Duration, kind, actor uint32, payload uint64) {
	k.queue.add(k.now.Add(d), kind, actor, payload, 0, k.now)
}

// AfterRef is After with a Ref handle for the model.
func (k *Kernel) AfterRef(d time.Duration, kind, actor uint32, payload uint64, ref uint32) {
	k.queue.add(k.now.Add(d), kind, actor, payload, ref, k.now)
}

// Stop makes Run return after the event being dispatched.
func (k *Kernel) Stop() { k.stop = true }

// Hash returns the rolling hash over every event dispatched so far.
func (k *Kernel) Hash() uint64 { return k.hash }

// Stream returns the dispatched events when RecordStream was set.
func (k *Kernel) Stream() []Event { return k.stream }

// Limits bound one call of Run. Zero means "no limit".
type Limits struct {
	// MaxEvents is the most events this call dispatches.
	MaxEvents int64
	// MaxTime is the virtual time past which no event is dispatched.
	MaxTime Time
}

// ErrBadLimits is wrapped by every error Validate returns.
var ErrBadLimits = errors.New("sim: bad limits")

// Validate rejects limits that cannot mean anything at virtual time now.
func (l Limits) Validate(now Time) error {
	if l.MaxEvents < 0 {
		return fmt.Errorf("%w: MaxEvents = %d, want 0 (no limit) or more", ErrBadLimits, l.MaxEvents)
	}
	if l.MaxTime < 0 {
		return fmt.Errorf("%w: MaxTime = %d, want 0 (no limit) or a time after the epoch", ErrBadLimits, l.MaxTime)
	}
	if l.MaxTime != 0 && l.MaxTime < now {
		return fmt.Errorf("%w: MaxTime = %v is before the current virtual time %v", ErrBadLimits, l.MaxTime, now)
	}
	return nil
}

// StopReason says why Run returned.
type StopReason uint8

const (
	Drained    StopReason = iota // no event left
	EventLimit                   // Limits.MaxEvents reached
	TimeLimit                    // the next event lies past Limits.MaxTime
	Stopped                      // the model called Stop
)

func (r StopReason) String() string {
	switch r {
	case Drained:
		return "drained"
	case EventLimit:
		return "event-limit"
	case TimeLimit:
		return "time-limit"
	case Stopped:
		return "stopped"
	}
	return fmt.Sprintf("StopReason(%d)", uint8(r))
}

// Stats describe a kernel's work so far.
type Stats struct {
	Events     uint64     // dispatched in total
	Scheduled  uint64     // ever scheduled
	Pending    int        // still waiting
	MaxPending int        // high-water mark of the queue
	Now        Time       // virtual time reached
	Hash       uint64     // rolling hash of the dispatched events
	Reason     StopReason // why the last Run returned
}

// Run dispatches events until the queue drains, a limit is reached or the
// model calls Stop. It may be called again to continue.
func (k *Kernel) Run(l Limits) (Stats, error) {
	if err := l.Validate(k.now); err != nil {
		return k.stats(Drained), err
	}
	if k.handler == nil {
		return k.stats(Drained), errors.New("sim: kernel has no handler")
	}
	k.stop = false
	// Zero limits mean "none": turn them into bounds that never bind, so
	// the loop tests each with one comparison. The event limit is the
	// value of k.dispatched to stop at; with none it is 2^64 − 1 events
	// away.
	end := k.dispatched + uint64(l.MaxEvents)
	if l.MaxEvents == 0 {
		end = k.dispatched - 1
	}
	maxTime := l.MaxTime
	if maxTime == 0 {
		maxTime = Time(1<<63 - 1)
	}
	for {
		if k.stop {
			return k.stats(Stopped), nil
		}
		if k.queue.n == 0 {
			return k.stats(Drained), nil
		}
		next := k.queue.peek()
		if next.At > maxTime {
			k.now = l.MaxTime
			return k.stats(TimeLimit), nil
		}
		if k.dispatched == end {
			return k.stats(EventLimit), nil
		}
		k.queue.drop()
		k.now = next.At
		k.hash = foldEvent(k.hash, next)
		if k.record {
			k.stream = append(k.stream, *next)
		}
		k.dispatched++
		k.handler(next)
	}
}

func (k *Kernel) stats(r StopReason) Stats {
	return Stats{
		Events:     k.dispatched,
		Scheduled:  k.queue.seq,
		Pending:    k.queue.len(),
		MaxPending: k.queue.maxN,
		Now:        k.now,
		Hash:       k.hash,
		Reason:     r,
	}
}
