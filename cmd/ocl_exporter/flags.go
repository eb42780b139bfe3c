package main

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
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
	"web.port-forward-address":  "127.0.0.1:PORT or [::1]:PORT, such as 127.0.0.1:29101",
	"auth.kubernetes.cache-ttl": "a positive duration, such as 30s or 1m",
	"kubeconfig":                "the path of a readable kubeconfig file",
	"mco.namespace":             "a namespace name (lower-case letters, digits and '-')",
	"query-timeout":             "a positive duration of at most " + maxQueryTimeout.String(),
}

// maxQueryTimeout bounds review's --query-timeout: the whole review may
// take 15 times it, which past about 170,000h overflowed to a deadline in
// the past.
const maxQueryTimeout = 24 * time.Hour

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
	// kingpin reads an int flag as a float and converts it: 1e20 became
	// -9223372036854775808 and 1.5 became 1.
	if g, ok := v.Value.(kingpin.Getter); ok {
		if _, isInt := g.Get().(int); isInt {
			if _, err := strconv.Atoi(s); err != nil {
				return flagError(v.name, "%q: %v", s, err)
			}
		}
	}
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
		{"query-timeout", o.command == reviewCommand && (o.tool.review.timeout <= 0 || o.tool.review.timeout > maxQueryTimeout), o.tool.review.timeout.String()},
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
	if err := checkPortForwardAddress(o.portForward); err != nil {
		return err
	}
	return checkKubeconfig(o.kubeconfig, os.Getenv("KUBECONFIG"))
}

// Bounds of the files the exporter reads at start; real ones are a few KB.
const (
	maxKubeconfigBytes = 16 << 20
	maxWebConfigBytes  = 1 << 20
)

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

// checkPortForwardAddress wants a loopback IP and a port: the address
// serves /status without authentication, which only a loopback address
// keeps to those who may port-forward to the pod.
func checkPortForwardAddress(a string) error {
	if a == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return flagError("web.port-forward-address", "%q: %v", a, err)
	}
	ip, err := netip.ParseAddr(host)
	if n, perr := strconv.ParseUint(port, 10, 16); err != nil || !ip.IsLoopback() || perr != nil || n == 0 {
		return flagError("web.port-forward-address", "%q is not a loopback IP and a port: /status is served there without authentication", a)
	}
	return nil
}

// checkKubeconfig refuses anything but a regular file of bounded size
// before client-go reads it: a FIFO would block the start for ever,
// /dev/zero would fill the memory. Without --kubeconfig, client-go reads
// every existing file $KUBECONFIG lists; missing ones it skips.
func checkKubeconfig(path, env string) error {
	if path != "" {
		return checkFile("kubeconfig", path, maxKubeconfigBytes)
	}
	for _, p := range filepath.SplitList(env) {
		if err := regularfile.Check(p, maxKubeconfigBytes); p != "" && err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("$KUBECONFIG: %w", err)
		}
	}
	return nil
}

// checkFile refuses a flag's file unless it is a regular file of at most
// maxBytes; "" is no file.
func checkFile(flag, path string, maxBytes int64) error {
	if path == "" {
		return nil
	}
	if err := regularfile.Check(path, maxBytes); err != nil {
		return flagError(flag, "%v", err)
	}
	return nil
}
