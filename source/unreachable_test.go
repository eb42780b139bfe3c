package source

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// lockedBuffer is a log the informers' goroutines write while the test
// reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// refused is what client-go returns when nothing listens at the address.
func refused(r snapshot.Resource) error {
	return &url.Error{Op: "Get", URL: "https://127.0.0.1:1/api/" + r.Name + "?limit=500",
		Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
}

// TestFirstRoundFailingHopelesslyEndsTheWait: when every resource's first
// list fails in a way waiting does not fix, WaitReady says so at once (its
// context would wait a minute), one cause per line, and the log has one
// line per cause, not one per resource. A cluster that answers anything,
// or fails in a way that may pass (503), is waited for.
func TestFirstRoundFailingHopelesslyEndsTheWait(t *testing.T) {
	unauthorized := apierrors.NewUnauthorized("Unauthorized")
	for _, c := range []struct {
		name  string
		list  func(snapshot.Resource) error
		want  []string // the causes, in resource order; nil: keeps waiting
		lines int
	}{
		{"refused", refused, []string{"dial tcp: connect: connection refused (" /* every resource */}, 1},
		{"401", func(snapshot.Resource) error { return unauthorized }, []string{"Unauthorized (", "(401)"}, 1},
		{"refused and 401", func(r snapshot.Resource) error {
			if r.MetadataOnly {
				return unauthorized
			}
			return refused(r)
		}, []string{"connection refused (", "Unauthorized ("}, 2},
		{"one readable", func(r snapshot.Resource) error {
			if r.Name == "nodes" {
				return nil
			}
			return refused(r)
		}, nil, 1},
		{"503", func(snapshot.Resource) error { return apierrors.NewServiceUnavailable("starting") }, nil, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log lockedBuffer
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			s := New(faulty{Backend: clientsFor(t, fstest.MapFS{"mosc.yaml": {Data: []byte(mosc)}}), list: c.list}, snapshot.DefaultNamespace,
				slog.New(slog.NewTextHandler(&log, nil)), nil)
			s.Run(ctx)
			timeout := time.Minute
			if c.want == nil {
				timeout = 2 * time.Second
			}
			wait, done := context.WithTimeout(ctx, timeout)
			defer done()
			err := s.WaitReady(wait)
			var u *UnreachableError
			switch {
			case c.want == nil:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("WaitReady = %v, want it to wait for its context", err)
				}
				return
			case !errors.As(err, &u):
				t.Fatalf("WaitReady = %v, want an UnreachableError", err)
			}
			msg := err.Error()
			if got := strings.Count(msg, "\n"); len(u.Causes) != c.lines || got != min(c.lines-1, 1)+c.lines-1 {
				t.Errorf("%d causes in %d lines, want %d, one line each (and a heading when several):\n%s", len(u.Causes), got+1, c.lines, msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(msg, "127.0.0.1:1/api") {
				t.Errorf("the cause repeats each request's URL:\n%s", msg)
			}
			if got := strings.Count(log.String(), "level=WARN"); got != c.lines {
				t.Errorf("%d warnings logged, want one per cause (%d):\n%s", got, c.lines, log.String())
			}
			if p := s.Pending(); len(p.Causes) != c.lines {
				t.Errorf("Pending() = %v, want %d causes", p, c.lines)
			}
		})
	}
}
