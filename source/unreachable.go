package source

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// hopeless are the failures waiting does not fix: the API server is not
// there, or it will not talk to this client. A first round of lists that
// fails only with these ends the wait at once instead of at the timeout.
var hopeless = []struct {
	is   func(error) bool
	hint string
}{
	{func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) },
		"nothing listens at the API server's address: is it up, and is the kubeconfig's server right?"},
	{func(err error) bool {
		var dns *net.DNSError
		return errors.As(err, &dns) && dns.IsNotFound
	}, "the API server's host name does not resolve: check the kubeconfig's server"},
	{func(err error) bool {
		return errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
	},
		"no route to the API server: check the kubeconfig's server and the network"},
	{apierrors.IsUnauthorized,
		"the API server refused the credentials (401): renew the kubeconfig's token (oc login) or client certificate"},
	{func(err error) bool {
		var unknown x509.UnknownAuthorityError
		var host x509.HostnameError
		var invalid x509.CertificateInvalidError
		var verify *tls.CertificateVerificationError
		return errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) || errors.As(err, &verify)
	}, "the API server's certificate is not trusted: check the kubeconfig's certificate-authority-data and server name"},
}

// cause is what a failed list or watch says without the request: the
// same for every resource when the API server is away ("dial tcp ...:
// connection refused", "Unauthorized"), and whether waiting can fix it.
func cause(err error) (text, hint string) {
	text = err.Error()
	if u := (*url.Error)(nil); errors.As(err, &u) {
		text = u.Err.Error()
	}
	for _, h := range hopeless {
		if h.is(err) {
			return text, h.hint
		}
	}
	return text, ""
}

// outage counts the resources failing with each cause, so that an API
// server gone away logs one line per cause, not one per resource, and a
// first round failing only hopelessly is told from a slow one.
type outage struct {
	mu sync.Mutex
	// by is the current cause of each resource's failure, by name; absent
	// while the resource is readable or refused for its own reason
	// (forbidden, not served, not captured).
	by map[string]failure
	// read is set once any resource was listed or watched: from then on
	// an outage is a cluster that went away, which the exporter waits out.
	read bool
}

type failure struct{ cause, hint string }

// set records resource's failure ("" cause when none) and reports
// whether its cause is one no other resource has now.
func (o *outage) set(resource string, f failure) (newCause bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if f.cause == "" {
		delete(o.by, resource)
		return false
	}
	if o.by == nil {
		o.by = map[string]failure{}
	}
	if old, ok := o.by[resource]; ok && old.cause == f.cause {
		return false
	}
	newCause = true
	for r, g := range o.by {
		if r != resource && g.cause == f.cause {
			newCause = false
		}
	}
	o.by[resource] = f
	return newCause
}

func (o *outage) readable() {
	o.mu.Lock()
	o.read = true
	o.mu.Unlock()
}

// UnreachableError is a first round of lists in which every resource
// failed in a way waiting does not fix.
type UnreachableError struct {
	// Causes are the distinct causes, each with the resources that failed
	// with it and what to check.
	Causes []Cause
}

// Cause is one distinct reason lists failed.
type Cause struct {
	Text, Hint string
	Resources  []string
}

// Error is one line per cause.
func (e *UnreachableError) Error() string {
	return "no resource could be listed" + causeLines(e.Causes)
}

// causeLines is ": cause" for one cause, else one indented line each.
func causeLines(causes []Cause) string {
	lines := make([]string, len(causes))
	for i, c := range causes {
		lines[i] = c.String()
	}
	if len(lines) == 1 {
		return ": " + lines[0]
	}
	return ":\n  " + strings.Join(lines, "\n  ")
}

// String is the cause, the resources (their number when many) and the hint.
func (c Cause) String() string {
	who := strings.Join(c.Resources, ", ")
	if len(c.Resources) > 3 {
		who = fmt.Sprintf("%d resources", len(c.Resources))
	}
	if c.Hint == "" {
		return fmt.Sprintf("%s (%s)", c.Text, who)
	}
	return fmt.Sprintf("%s (%s): %s", c.Text, who, c.Hint)
}

// PendingError lists the resources that did not sync in time.
type PendingError struct{ Causes []Cause }

func (e *PendingError) Error() string { return "not every resource listed" + causeLines(e.Causes) }

// add appends resource to the cause with text, adding the cause if new.
func add(causes []Cause, f failure, resource string) []Cause {
	i := slices.IndexFunc(causes, func(c Cause) bool { return c.Text == f.cause })
	if i < 0 {
		causes = append(causes, Cause{Text: f.cause, Hint: f.hint})
		i = len(causes) - 1
	}
	causes[i].Resources = append(causes[i].Resources, resource)
	return causes
}

// pending groups resources by their current failure, "no answer yet" for
// those that have none.
func (o *outage) pending(resources []string) *PendingError {
	o.mu.Lock()
	defer o.mu.Unlock()
	var causes []Cause
	for _, r := range resources {
		f, ok := o.by[r]
		if !ok {
			f = failure{cause: "no answer yet"}
		}
		causes = add(causes, f, r)
	}
	return &PendingError{Causes: causes}
}

// unreachable is an UnreachableError when nothing was ever read, every
// resource of names has failed, and each failure is hopeless; else nil.
func (o *outage) unreachable(names []string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.read || len(o.by) < len(names) {
		return nil
	}
	var causes []Cause
	for _, name := range names {
		f, ok := o.by[name]
		if !ok || f.hint == "" {
			return nil
		}
		causes = add(causes, f, name)
	}
	return &UnreachableError{Causes: causes}
}
