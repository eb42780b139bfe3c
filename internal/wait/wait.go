// Package wait is how tests wait for something to happen: they poll a
// condition until it holds or a deadline passes, never sleep a fixed time
// and hope. A deadline bounds a hang, not a speed: give a generous one, as
// the machine may be loaded.
package wait

import (
	"testing"
	"time"
)

// interval is how often For polls: short enough to add little to a test,
// long enough not to compete for the CPU with what it waits for.
const interval = 10 * time.Millisecond

// For calls check until it returns nil, and fails tb if it still returns
// an error after timeout, with what was awaited and the last error (the
// state the condition saw): "waited 10s for WHAT: ERR". check runs in the
// caller's goroutine, so it may call tb.Fatal itself for a state that can
// never turn into the awaited one.
func For(tb testing.TB, timeout time.Duration, what string, check func() error) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waited %s for %s: %v", timeout, what, err)
			return
		}
		time.Sleep(interval)
	}
}
