package sim

import (
	"fmt"
	"time"
)

// Time is a virtual instant: nanoseconds since the run's epoch. It is an
// integer so that two runs of one seed agree to the nanosecond; nothing in a
// run ever reads the wall clock.
type Time int64

// Add returns t moved forward by d.
func (t Time) Add(d time.Duration) Time { return t + Time(d) }

// Sub returns the duration t − u.
func (t Time) Sub(u Time) time.Duration { return time.Duration(t - u) }

// Duration returns t as the duration elapsed since the epoch.
func (t Time) Duration() time.Duration { return time.Duration(t) }

// String renders t as an offset from the epoch, for example "+1.25s".
func (t Time) String() string { return fmt.Sprintf("+%v", time.Duration(t)) }
