package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/version"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ocl-exporter/ocl_exporter/kubeapi"
	"github.com/ocl-exporter/ocl_exporter/source/snapshot"
)

// whoAmITimeout bounds the identity question: the answer only words
// messages, and a diagnose must not wait on it.
const whoAmITimeout = 5 * time.Second

// identity names who the commands read the cluster as: the user the API
// server authenticates (a SelfSubjectReview), else, where that is not
// served or not answered, the kubeconfig's user and context. Offline it
// is "".
func identity(ctx context.Context, cfg *rest.Config, kubeconfig string) string {
	if cfg == nil {
		return ""
	}
	if c, err := kubeapi.New(cfg, name+"/"+version.Version); err == nil {
		ask, cancel := context.WithTimeout(ctx, whoAmITimeout)
		defer cancel()
		if user, err := c.WhoAmI(ask); err == nil && user != "" {
			return "user " + user
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	raw, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).RawConfig()
	if c, ok := raw.Contexts[raw.CurrentContext]; err == nil && ok {
		return fmt.Sprintf("kubeconfig user %s (context %s)", c.AuthInfo, raw.CurrentContext)
	}
	return "the pod's service account"
}

// quietSource is the logger the informers of diagnose and capture log
// with: errors only, unless --log.level asks for more. What they could
// not read is summed up once (logUnavailable), and a cluster that cannot
// be reached at all ends the command with one line of its own, so no
// per-resource warning comes first.
func quietSource(o *options, logger *slog.Logger) *slog.Logger {
	if o.logLevelSet {
		return logger
	}
	return slog.New(levelAtLeast{logger.Handler(), slog.LevelError})
}

// levelAtLeast drops the records below min.
type levelAtLeast struct {
	slog.Handler
	min slog.Level
}

func (h levelAtLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h levelAtLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return levelAtLeast{h.Handler.WithAttrs(as), h.min}
}

func (h levelAtLeast) WithGroup(g string) slog.Handler {
	return levelAtLeast{h.Handler.WithGroup(g), h.min}
}

// logUnavailable logs in one line what could not be read, by cause, as
// whom: the report (or the capture's records) has each resource.
func logUnavailable(logger *slog.Logger, status []snapshot.ResourceStatus, who string) {
	byProblem := map[snapshot.Problem][]string{}
	var problems []snapshot.Problem
	for _, st := range status {
		if st.Available {
			continue
		}
		if _, seen := byProblem[st.Problem]; !seen {
			problems = append(problems, st.Problem)
		}
		byProblem[st.Problem] = append(byProblem[st.Problem], st.Resource)
	}
	if len(problems) == 0 {
		return
	}
	slices.Sort(problems)
	attrs := []any{}
	if who != "" {
		attrs = append(attrs, "as", who)
	}
	n := 0
	for _, p := range problems {
		n += len(byProblem[p])
		attrs = append(attrs, string(p), strings.Join(byProblem[p], ","))
	}
	logger.Warn(fmt.Sprintf("%d of %d resources could not be read; the report says what that leaves unknown", n, len(status)), attrs...)
}
