package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
)

// cancelAt is a log writer that ends ctx, as SIGINT or SIGTERM does, once
// a line holds text.
type cancelAt struct {
	text   string
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	logs   bytes.Buffer
}

func (c *cancelAt) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logs.Write(p)
	if bytes.Contains(p, []byte(c.text)) {
		c.cancel(errors.New("interrupt signal received"))
	}
	return len(p), nil
}

// TestSignalStopsTheSnapshotLoad: SIGINT (Ctrl-C) or a pod's SIGTERM that
// arrives while a snapshot is read stops the read, in diagnose and in the
// exporter: the load never reaches its end, and the error says why.
func TestSignalStopsTheSnapshotLoad(t *testing.T) {
	const mustGather = "../../testdata/must-gathers/4.18-seed004-build-failed-no-message"
	for _, args := range [][]string{
		{"diagnose", "--snapshot", mustGather, "--log.level=info"},
		{"--snapshot", mustGather, "--log.level=info", "--web.listen-address=" + freeAddress(t)},
	} {
		ctx, cancel := context.WithCancelCause(t.Context())
		logs := &cancelAt{text: "reading a snapshot offline", cancel: cancel}
		old := stdout
		stdout = io.Discard
		err := run(ctx, args, logs)
		stdout = old
		cancel(nil)
		if err == nil || !strings.Contains(err.Error(), "stopped reading: interrupt signal received") {
			t.Errorf("%v: %v, want the load stopped by the signal", args, err)
		}
		if strings.Contains(logs.logs.String(), "read a must-gather") {
			t.Errorf("%v: the load went on to its end after the signal:\n%s", args, logs.logs.String())
		}
	}
}
