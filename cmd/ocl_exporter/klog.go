package main

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"k8s.io/klog/v2"
)

// routeKlog sends client-go's own logs (reflector errors, throttling, the
// API server going away) through the exporter's logger, so they follow
// --log.format instead of klog's own text on stderr, all at debug level:
// client-go repeats each failure per resource and per retry, and the
// exporter logs what they mean once per resource and cause (source's
// "resource unavailable"), so --log.level=debug shows them, other levels
// not. The attribute is "component": klog writes "logger" itself for a
// named logger (the reflector's), and a JSON line with a key twice is one
// that log pipelines mangle.
//
// klog keeps its logger in plain globals that every informer goroutine
// reads: it is set once per process (setting it again while the informers
// of an earlier run still log is a data race), and routeKlog swaps only
// the handler behind it.
func routeKlog(logger *slog.Logger) {
	h := logger.Handler()
	klogTarget.Store(&h)
	klogOnce.Do(func() {
		klog.SetSlogLogger(slog.New(debugOnly{}).With("component", "client-go"))
	})
}

var (
	klogTarget atomic.Pointer[slog.Handler]
	klogOnce   sync.Once
)

// debugOnly writes every record at debug level to the handler routeKlog
// last set, client-go's level kept as the attribute "klog_level". It
// keeps the attributes and groups it was given, to apply them to that
// handler.
type debugOnly struct {
	with []func(slog.Handler) slog.Handler
}

func (debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return (*klogTarget.Load()).Enabled(ctx, slog.LevelDebug)
}

// Handle checks the level itself: logr, between klog and slog, writes
// errors without asking Enabled.
func (h debugOnly) Handle(ctx context.Context, r slog.Record) error {
	target := *klogTarget.Load()
	if !target.Enabled(ctx, slog.LevelDebug) {
		return nil
	}
	for _, w := range h.with {
		target = w(target)
	}
	d := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
	d.AddAttrs(slog.String("klog_level", r.Level.String()))
	r.Attrs(func(a slog.Attr) bool { d.AddAttrs(a); return true })
	return target.Handle(ctx, d)
}

func (h debugOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugOnly{append(slices.Clip(h.with), func(t slog.Handler) slog.Handler { return t.WithAttrs(attrs) })}
}

func (h debugOnly) WithGroup(name string) slog.Handler {
	return debugOnly{append(slices.Clip(h.with), func(t slog.Handler) slog.Handler { return t.WithGroup(name) })}
}
