//go:build scale

package scale

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ocl-exporter/ocl_exporter/test/cluster"
)

// floorEnv, set to "address file", makes the test binary the floor
// server instead of running tests.
const floorEnv = "SCALE_FLOOR_SERVE"

func TestMain(m *testing.M) {
	if v := os.Getenv(floorEnv); v != "" {
		var addr, file string
		if _, err := fmt.Sscan(v, &addr, &file); err != nil {
			fmt.Fprintf(os.Stderr, "$%s=%q: want an address and a file: %v\n", floorEnv, v, err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, serveFloor(addr, file))
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// serveFloor answers every request with the bytes of file, read once, as
// a gzip exposition: a plain net/http server with nothing to compute,
// the least any exporter can cost per scrape of the same bytes.
func serveFloor(addr, file string) error {
	body, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	length := strconv.Itoa(len(body))
	srv := &http.Server{Addr: addr, ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8; escaping=underscores")
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", length)
		_, _ = w.Write(body)
	})}
	return srv.ListenAndServe()
}

// startFloor runs this test binary as the floor server of body, in its own
// process so that its CPU time is read as the exporters' is, and returns
// it once it answers.
func startFloor(dir string, body []byte) (*cluster.Proc, string, error) {
	file := dir + "/floor.gz"
	if err := os.WriteFile(file, body, 0o644); err != nil {
		return nil, "", err
	}
	addr, err := cluster.FreeAddress()
	if err != nil {
		return nil, "", err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	p, err := cluster.StartProcEnv(dir, Floor, self, []string{floorEnv + "=" + addr + " " + file})
	if err != nil {
		return nil, "", err
	}
	url := "http://" + addr
	if err := cluster.WaitHTTP(p, http.DefaultClient, url+"/metrics", "", time.Minute); err != nil {
		p.Stop()
		return nil, "", err
	}
	return p, url, nil
}

// target is a server scraped in a round.
type target struct {
	url string
	pid int
	// latencies are its scrapes', in order; cpu the process's CPU time
	// over all of them; body the last body.
	latencies []time.Duration
	cpu       time.Duration
	body      []byte
}

// scrapeRounds scrapes each target n times as Prometheus does (gzip),
// back to back, the targets in turn and in the reverse order every other
// round (ABBA), so that a load on the machine falls on each alike. Each
// target's CPU time is read around all the rounds: a process idles while
// the others are scraped.
func scrapeRounds(ctx context.Context, targets []*target, n int) error {
	for _, t := range targets {
		t.latencies = make([]time.Duration, 0, n)
		var err error
		if t.cpu, err = cpuTime(t.pid); err != nil {
			return err
		}
	}
	for i := range n {
		for j := range targets {
			t := targets[j]
			if i%2 == 1 {
				t = targets[len(targets)-1-j]
			}
			begin := time.Now()
			body, err := scrape(ctx, http.DefaultClient, t.url+"/metrics", true)
			if err != nil {
				return err
			}
			t.latencies = append(t.latencies, time.Since(begin))
			t.body = body
		}
	}
	for _, t := range targets {
		end, err := cpuTime(t.pid)
		if err != nil {
			return err
		}
		t.cpu = end - t.cpu
	}
	return nil
}

// record puts t's scrapes into r.
func (t *target) record(r *Result) {
	sorted := sortedCopy(t.latencies)
	r.ScrapeP50Ms, r.ScrapeP99Ms = percentile(sorted, 0.5), percentile(sorted, 0.99)
	r.CPUPerScrapeMs = float64(t.cpu) / float64(time.Millisecond) / float64(len(t.latencies))
	r.GzipBytes = len(t.body)
}
