package cluster

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is a server a suite runs, logging to <dir>/<name>.log.
type Proc struct {
	Name string
	Cmd  *exec.Cmd
	Log  string
	done chan struct{}
}

// StartProc starts bin with args, its output going to <dir>/<name>.log.
func StartProc(dir, name, bin string, args ...string) (*Proc, error) {
	return StartProcEnv(dir, name, bin, nil, args...)
}

// StartProcEnv is StartProc with env ("KEY=value") added to the
// environment, for servers configured by it.
func StartProcEnv(dir, name, bin string, env []string, args ...string) (*Proc, error) {
	p := &Proc{Name: name, Log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	p.Cmd = exec.Command(bin, args...)
	if env != nil {
		p.Cmd.Env = append(os.Environ(), env...)
	}
	p.Cmd.Stdout, p.Cmd.Stderr = f, f
	// A test binary killed by -timeout must not leave servers behind.
	p.Cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.Cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	go func() {
		_ = p.Cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Running says whether the process has not exited yet.
func (p *Proc) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Stop asks the process to terminate, then kills it after 15 seconds.
func (p *Proc) Stop() {
	if !p.Running() {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.done
	}
}

// Tail is the end of the process's log, for failure messages.
func (p *Proc) Tail(lines int) string {
	b, _ := os.ReadFile(p.Log)
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// WaitHTTP polls url until it answers 200, the process exits or the time is
// up; errors carry the end of the process's log.
func WaitHTTP(p *Proc, client *http.Client, url, token string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before %s answered:\n%s", p.Name, url, p.Tail(40))
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer %s within %s (last: %s):\n%s", p.Name, url, timeout, last, p.Tail(40))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// FreePorts asks the kernel for n free loopback ports.
func FreePorts(n int) ([]string, error) {
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		out = append(out, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	return out, nil
}

// FreeAddress is a free 127.0.0.1:port for a server a test starts.
func FreeAddress() (string, error) {
	p, err := FreePorts(1)
	if err != nil {
		return "", err
	}
	return "127.0.0.1:" + p[0], nil
}
