package main

import (
	"context"
	"log/slog"

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
func routeKlog(logger *slog.Logger) {
	klog.SetSlogLogger(slog.New(debugOnly{logger.Handler()}).With("component", "client-go"))
}

// debugOnly writes every record at debug level, client-go's level kept as
// the attribute "klog_level".
type debugOnly struct{ slog.Handler }

func (h debugOnly) Enabled(ctx context.Context, _ slog.Level) bool {
	return h.Handler.Enabled(ctx, slog.LevelDebug)
}

// Handle checks the level itself: logr, between klog and slog, writes
// errors without asking Enabled.
func (h debugOnly) Handle(ctx context.Context, r slog.Record) error {
	if !h.Handler.Enabled(ctx, slog.LevelDebug) {
		return nil
	}
	d := slog.NewRecord(r.Time, slog.LevelDebug, r.Message, r.PC)
	d.AddAttrs(slog.String("klog_level", r.Level.String()))
	r.Attrs(func(a slog.Attr) bool { d.AddAttrs(a); return true })
	return h.Handler.Handle(ctx, d)
}

func (h debugOnly) WithAttrs(attrs []slog.Attr) slog.Handler {
	return debugOnly{h.Handler.WithAttrs(attrs)}
}

func (h debugOnly) WithGroup(name string) slog.Handler { return debugOnly{h.Handler.WithGroup(name)} }
