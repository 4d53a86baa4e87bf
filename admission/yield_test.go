package admission

import (
	"context"
	"testing"
	"time"
)

// acquired runs Acquire in a goroutine and reports its end func once it returns.
func acquired(y *Yield) <-chan func() {
	ch := make(chan func(), 1)
	go func() {
		end, err := y.Acquire(context.Background())
		if err == nil {
			ch <- end
		}
	}()
	return ch
}

func TestYieldPacesBulkBehindInteractive(t *testing.T) {
	g, fake := newTestGate(t, Config{HighWatermark: 100}, newFakeSource())
	y, err := NewYield(g, fake, 2, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// No interactive traffic: no bound.
	var ends []func()
	for range 5 {
		ends = append(ends, <-acquired(y))
	}
	for _, end := range ends {
		end()
	}
	// An interactive request: two at once, the third waits for one to end.
	if _, ok := g.Admit(Interactive); !ok {
		t.Fatal("interactive refused")
	}
	a, b := <-acquired(y), <-acquired(y)
	armed := fake.TimerCreated()
	third := acquired(y)
	<-armed // the third is waiting, for a unit's end or the window's
	select {
	case <-third:
		t.Fatal("a third unit started beside interactive traffic")
	default:
	}
	a()
	a() // ending twice ends once
	c := <-third
	armed = fake.TimerCreated()
	fourth := acquired(y)
	<-armed
	// The window passes with no more interactive requests: the waiter goes.
	fake.Advance(time.Second)
	d := <-fourth
	b()
	c()
	d()
	if y.busy != 0 {
		t.Fatalf("busy %d after every unit ended", y.busy)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.Admit(Interactive)
	e1, _ := y.Acquire(ctx)
	e2, _ := y.Acquire(ctx)
	cancel()
	if _, err := y.Acquire(ctx); err == nil {
		t.Fatal("a cancelled wait started a unit")
	}
	e1()
	e2()
}

// TestYieldTakesBackPlacesTakenWhileQuiet: units started while no interactive request was
// about do not hand their places on once one is: the waiters start as the count falls under
// few.
func TestYieldTakesBackPlacesTakenWhileQuiet(t *testing.T) {
	g, fake := newTestGate(t, Config{HighWatermark: 100}, newFakeSource())
	y, err := NewYield(g, fake, 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	quiet := []func(){<-acquired(y), <-acquired(y), <-acquired(y)}
	g.Admit(Interactive)
	var waiting []<-chan func()
	for range 3 {
		armed := fake.TimerCreated()
		waiting = append(waiting, acquired(y))
		<-armed
	}
	started := func() int {
		n := 0
		for _, w := range waiting {
			select {
			case end := <-w:
				n++
				defer end()
			default:
			}
		}
		return n
	}
	quiet[0]()
	quiet[1]()
	if n := started(); n != 0 {
		t.Fatalf("%d waiters started while 1 quiet unit still runs, few 1", n)
	}
	quiet[2]()
	first := <-waiting[0]
	if y.busy != 1 {
		t.Fatalf("busy %d, want 1", y.busy)
	}
	first()
	<-waiting[1]
}
