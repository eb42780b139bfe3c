package wait

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the message and stops the
// goroutine, as testing's does.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls For on a recorder in its own goroutine and returns what it
// failed with ("" if it returned).
func run(timeout time.Duration, check func() error) string {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		For(r, timeout, "the thing", check)
	}()
	<-done
	return r.msg
}

func TestForReturnsOnceTheConditionHolds(t *testing.T) {
	calls := 0
	msg := run(time.Minute, func() error {
		if calls++; calls < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if msg != "" || calls != 3 {
		t.Errorf("For failed with %q after %d checks, want success on the third", msg, calls)
	}
}

func TestForFailsNamingWhatAndTheLastState(t *testing.T) {
	calls := 0
	msg := run(50*time.Millisecond, func() error {
		calls++
		return fmt.Errorf("state %d", calls)
	})
	want := fmt.Sprintf("waited 50ms for the thing: state %d", calls)
	if msg != want || calls < 2 {
		t.Errorf("For failed with %q after %d checks, want %q", msg, calls, want)
	}
}
