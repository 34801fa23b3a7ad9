package sim

import (
	"errors"
	"sort"
	"testing"
	"time"
)

func TestDispatchOrderIsTimeThenInsertion(t *testing.T) {
	var got []Event
	k := New(Config{Handler: func(ev *Event) { got = append(got, *ev) }})
	c := NewPCG(7)
	var want []Event
	for i := 0; i < 5000; i++ {
		at := Time(c.Choose(50)) // many ties on purpose
		k.Schedule(at, uint32(i%3), uint32(i), uint64(i))
		want = append(want, Event{At: at, Seq: uint64(i), Kind: uint32(i % 3), Actor: uint32(i), Payload: uint64(i)})
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].At < want[j].At })
	st, err := k.Run(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Reason != Drained || st.Events != 5000 || st.Pending != 0 {
		t.Fatalf("stats = %+v, want drained after 5000 events", st)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("event #%d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestEventsScheduledDuringDispatchKeepOrder(t *testing.T) {
	var order []uint64
	var k *Kernel
	k = New(Config{Handler: func(ev *Event) {
		order = append(order, ev.Payload)
		if ev.Payload == 1 {
			k.After(0, 0, 0, 3) // same instant as payload 2, scheduled later
		}
	}})
	k.Schedule(10, 0, 0, 1)
	k.Schedule(10, 0, 0, 2)
	if _, err := k.Run(Limits{}); err != nil {
		t.Fatal(err)
	}
	if len(order) != 3 || order[0] != 1 || order[1] != 2 || order[2] != 3 {
		t.Fatalf("order = %v, want [1 2 3]", order)
	}
	if k.Now() != 10 {
		t.Fatalf("now = %v, want +10ns", k.Now())
	}
}

func TestSchedulingInThePastPanics(t *testing.T) {
	var k *Kernel
	k = New(Config{Handler: func(ev *Event) { k.Schedule(ev.At-1, 0, 0, 0) }})
	k.Schedule(5, 0, 0, 0)
	defer func() {
		if recover() == nil {
			t.Fatal("scheduling before now did not panic")
		}
	}()
	_, _ = k.Run(Limits{})
}

func TestLimits(t *testing.T) {
	var k *Kernel
	k = New(Config{Handler: func(ev *Event) { k.After(time.Millisecond, 0, 0, ev.Payload+1) }})
	k.Schedule(0, 0, 0, 0)

	st, err := k.Run(Limits{MaxEvents: 10})
	if err != nil {
		t.Fatal(err)
	}
	if st.Reason != EventLimit || st.Events != 10 || st.Pending != 1 {
		t.Fatalf("after event limit: %+v", st)
	}
	st, err = k.Run(Limits{MaxTime: Time(25 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	// Events at 10ms..25ms inclusive: 16 more.
	if st.Reason != TimeLimit || st.Events != 26 || st.Now != Time(25*time.Millisecond) {
		t.Fatalf("after time limit: %+v", st)
	}
	k.SetHandler(func(*Event) { k.Stop() })
	st, err = k.Run(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Reason != Stopped || st.Events != 27 {
		t.Fatalf("after stop: %+v", st)
	}
}

func TestBadLimitsAreRejected(t *testing.T) {
	k := New(Config{Handler: func(*Event) {}})
	k.Schedule(100, 0, 0, 0)
	if _, err := k.Run(Limits{MaxEvents: 1}); err != nil {
		t.Fatal(err)
	}
	for _, l := range []Limits{{MaxEvents: -1}, {MaxTime: -5}, {MaxTime: 50}} {
		if _, err := k.Run(l); !errors.Is(err, ErrBadLimits) {
			t.Errorf("Run(%+v) error = %v, want ErrBadLimits", l, err)
		}
	}
	if _, err := New(Config{}).Run(Limits{}); err == nil {
		t.Error("a kernel without a handler ran")
	}
}
