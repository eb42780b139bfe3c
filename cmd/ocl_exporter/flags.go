package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ocl-exporter/ocl_exporter/server"
)

// minRenderInterval keeps an idle exporter idle: a render of a large
// cluster costs tens of milliseconds, and 1ns burnt a core.
const minRenderInterval = 100 * time.Millisecond

// accepted says, per flag, which values it takes: every error about a flag
// ends with it.
var accepted = map[string]string{
	"collector.build-history":   "a whole number, 0 or more",
	"collector.render-interval": "a duration of at least " + minRenderInterval.String() + ", such as 500ms or 1s",
	"web.max-requests":          "a whole number, 0 for no limit",
	"web.listen-address":        "host:port or :port, such as :29100 or 127.0.0.1:29100",
	"auth.kubernetes.cache-ttl": "a positive duration, such as 30s or 1m",
	"kubeconfig":                "the path of a readable kubeconfig file",
	"mco.namespace":             "a namespace name (lower-case letters, digits and '-')",
}

// flagError names the flag and what it accepts.
func flagError(name string, format string, args ...any) error {
	msg := fmt.Sprintf("--%s: %s", name, fmt.Sprintf(format, args...))
	if a, ok := accepted[name]; ok {
		msg += "; accepted: " + a
	}
	return errors.New(msg)
}

// namedValue makes kingpin's parse errors name their flag: on its own it
// answers --collector.build-history=abc with `strconv.ParseFloat: parsing
// "abc"`.
type namedValue struct {
	name string
	kingpin.Value
}

func (v namedValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		return flagError(v.name, "%q: %v", s, err)
	}
	return nil
}

// nameParseErrors wraps the value of every top-level flag that takes a
// value and can refuse it: not boolean flags (kingpin takes no value for
// them and checks the type), not repeatable ones (strings, which cannot
// fail).
func nameParseErrors(app *kingpin.Application) {
	for _, f := range app.Model().Flags {
		if !f.IsBoolFlag() && !isCumulative(f.Value) {
			app.GetFlag(f.Name).SetValue(namedValue{f.Name, f.Value})
		}
	}
}

func isCumulative(v kingpin.Value) bool {
	c, ok := v.(interface{ IsCumulative() bool })
	return ok && c.IsCumulative()
}

// validate checks what parsing cannot: every value that would fail later,
// hang, panic or silently mean something else fails here, naming its flag.
func validate(o *options) error {
	if o.example && o.snapshot != "" {
		return errors.New("--example and --snapshot are exclusive")
	}
	if o.authKubernetes && (o.example || o.snapshot != "") {
		return errors.New("--auth.kubernetes reviews tokens with a cluster's API server; offline mode (--snapshot, --example) has none: drop --auth.kubernetes, and use --web.config.file for TLS or basic auth")
	}
	if err := server.CheckMetricsPath(o.metricsPath); err != nil {
		return err
	}
	for _, check := range []struct {
		name string
		bad  bool
		what string
	}{
		{"auth.kubernetes.cache-ttl", o.authCacheTTL <= 0, o.authCacheTTL.String()},
		{"collector.render-interval", o.renderInterval < minRenderInterval, o.renderInterval.String()},
		{"collector.build-history", o.collector.BuildHistory < 0, strconv.Itoa(o.collector.BuildHistory)},
		{"web.max-requests", o.maxRequests < 0, strconv.Itoa(o.maxRequests)},
		{"web.max-connections", o.maxConnections < 0, strconv.Itoa(o.maxConnections)},
	} {
		if check.bad {
			return flagError(check.name, "%s is out of range", check.what)
		}
	}
	if errs := validation.IsDNS1123Label(o.namespace); len(errs) > 0 {
		return flagError("mco.namespace", "%q: %s", o.namespace, strings.Join(errs, "; "))
	}
	if err := checkListenAddresses(*o.web.WebListenAddresses); err != nil {
		return err
	}
	return checkKubeconfig(o.kubeconfig)
}

func checkListenAddresses(addrs []string) error {
	for _, a := range addrs {
		if strings.HasPrefix(a, "vsock://") {
			continue // exporter-toolkit parses these itself
		}
		_, port, err := net.SplitHostPort(a)
		if err != nil {
			return flagError("web.listen-address", "%q: %v", a, err)
		}
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return flagError("web.listen-address", "%q has no port number between 1 and 65535", a)
		}
	}
	return nil
}

// checkKubeconfig refuses anything but a regular file before client-go
// opens it: a FIFO would block the start for ever.
func checkKubeconfig(path string) error {
	if path == "" {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return flagError("kubeconfig", "loading --kubeconfig %q: %v", path, err)
	}
	switch m := info.Mode(); {
	case m.IsDir():
		return flagError("kubeconfig", "%q is a directory, not a regular file", path)
	case m&os.ModeNamedPipe != 0:
		return flagError("kubeconfig", "%q is a FIFO, not a regular file", path)
	case !m.IsRegular():
		return flagError("kubeconfig", "%q is not a regular file", path)
	}
	return nil
}
