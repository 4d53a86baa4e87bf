package clock

import (
	"testing"
	"time"
)

func TestFakeTimersFireInOrderOnAdvance(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	late := f.NewTimer(2 * time.Second)
	early := f.NewTimer(time.Second)
	stopped := f.NewTimer(time.Second)
	if !stopped.Stop() {
		t.Fatal("Stop on a pending timer should report true")
	}
	f.Advance(1500 * time.Millisecond)
	select {
	case at := <-early.C():
		if want := time.Unix(1, 0); !at.Equal(want) {
			t.Fatalf("early fired at %v, want %v", at, want)
		}
	default:
		t.Fatal("early timer did not fire")
	}
	select {
	case <-late.C():
		t.Fatal("late timer fired too soon")
	case <-stopped.C():
		t.Fatal("stopped timer fired")
	default:
	}
	if f.Pending() != 1 {
		t.Fatalf("pending = %d, want 1", f.Pending())
	}
	f.Advance(time.Second)
	<-late.C()
	if late.Stop() {
		t.Fatal("Stop after firing should report false")
	}
}

func TestFakeTimerCreatedSignals(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	ch := f.TimerCreated()
	go f.NewTimer(time.Second)
	<-ch
	if f.Pending() != 1 {
		t.Fatalf("pending = %d, want 1", f.Pending())
	}
}
