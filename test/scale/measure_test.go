//go:build scale

package scale

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// memory is a process's resident set now, its anonymous part (heap,
// stacks: what is not the binary's mapped pages) and its peak, in MiB.
func memory(pid int) (rss, anon, peak float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, 0, err
	}
	kib := func(field string) float64 {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == field+":" {
				v, _ := strconv.ParseFloat(f[1], 64)
				return v / 1024
			}
		}
		return 0
	}
	return kib("VmRSS"), kib("RssAnon"), kib("VmHWM"), nil
}

// clockTick is USER_HZ, 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// cpuTime is the CPU time a process has used: its threads' time on a CPU,
// to the nanosecond (/proc/<pid>/task/*/schedstat; a Go process keeps its
// threads), where /proc/<pid>/stat counts ticks of 10 ms: 200 scrapes of
// 0.1 ms are two. Without schedstat, the ticks.
func cpuTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return cpuTicks(pid)
	}
	var sum time.Duration
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // a thread that ended
		}
		ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", task, err)
		}
		sum += time.Duration(ns)
	}
	return sum, nil
}

// loadAverage is the machine's load average over the last minute.
func loadAverage() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// cpuTicks is the user and system CPU time a process has used, in ticks.
func cpuTicks(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command name; utime and stime are
	// the 14th and 15th of the whole line.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * clockTick, nil
}

// scrape fetches url as Prometheus does (gzip when gz), reading the whole
// body, and returns the bytes received.
func scrape(ctx context.Context, client *http.Client, url string, gz bool) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	if gz {
		// Set by hand, the transport leaves the body compressed.
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	return b, err
}

// countLines counts the lines of text starting with prefix.
func countLines(text []byte, prefix string) int {
	n := 0
	for l := range strings.Lines(string(text)) {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// percentile of sorted durations, in milliseconds.
func percentile(sorted []time.Duration, p float64) float64 {
	i := int(float64(len(sorted)-1) * p)
	return float64(sorted[i]) / float64(time.Millisecond)
}

func sortedCopy(d []time.Duration) []time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d
}

// auditPolicy logs every request's metadata, once it has an answer.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
`

type auditEvent struct {
	AuditID   string    `json:"auditID"`
	UserAgent string    `json:"userAgent"`
	Received  time.Time `json:"requestReceivedTimestamp"`
}

// requests counts the API requests in the audit log at path received in
// [from, to) from a client whose user agent starts with agent.
func requests(path, agent string, from, to time.Time) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return 0, err
		}
		if strings.HasPrefix(e.UserAgent, agent) && !e.Received.Before(from) && e.Received.Before(to) {
			seen[e.AuditID] = true
		}
	}
	return len(seen), sc.Err()
}
