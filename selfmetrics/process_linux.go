package selfmetrics

import (
	"bytes"
	"os"
	"syscall"
)

// process writes what client_golang's process collector does on Linux,
// but for process_network_*: those are the counters of the whole network
// namespace (/proc/self/net/netstat), whose read alone cost more than the
// rest of a scrape. The same quantities come from cheaper sources: the
// CPU time from getrusage(2) (to the microsecond; /proc/self/stat counts
// ticks of 10 ms), the sizes from /proc/self/statm (/proc/self/stat sums
// over every thread), the limits from getrlimit(2) (/proc/self/limits is
// text). The start time is read once; the buffers are reused.
type process struct {
	buf   [8192]byte
	start float64 // seconds since the epoch; 0 until read
}

// userHZ is the unit of /proc's times, as procfs assumes.
const userHZ = 100

func (p *process) append(b []byte) []byte {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b = AppendFamily(b, "process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", "counter", float64(ru.Utime.Nano()+ru.Stime.Nano())/1e9)
	}
	var nofile, as syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile) == nil {
		b = AppendFamily(b, "process_max_fds", "Maximum number of open file descriptors.", "gauge", float64(nofile.Cur))
	}
	if fds, ok := p.openFDs(); ok {
		b = AppendFamily(b, "process_open_fds", "Number of open file descriptors.", "gauge", float64(fds))
	}
	var statm [2]uint64 // size and resident, in pages
	statmOK := p.readFields("/proc/self/statm", 0, statm[:])
	if statmOK {
		b = AppendFamily(b, "process_resident_memory_bytes", "Resident memory size in bytes.", "gauge", float64(statm[1]*uint64(os.Getpagesize())))
	}
	if p.start == 0 {
		p.start = p.startTime()
	}
	if p.start != 0 {
		b = AppendFamily(b, "process_start_time_seconds", "Start time of the process since unix epoch in seconds.", "gauge", p.start)
	}
	if statmOK {
		b = AppendFamily(b, "process_virtual_memory_bytes", "Virtual memory size in bytes.", "gauge", float64(statm[0]*uint64(os.Getpagesize())))
	}
	if syscall.Getrlimit(syscall.RLIMIT_AS, &as) == nil {
		b = AppendFamily(b, "process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", "gauge", float64(as.Cur))
	}
	return b
}

// read reads the whole of a small file into p.buf.
func (p *process) read(path string) ([]byte, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(p.buf) {
		m, err := syscall.Read(fd, p.buf[n:])
		if err != nil || m <= 0 {
			return p.buf[:n], err == nil
		}
		n += m
	}
	return nil, false // larger than the buffer: not a file this reads
}

// readFields parses the space-separated unsigned fields of a one-line
// file into out, from the first after skip spaces.
func (p *process) readFields(path string, skip int, out []uint64) bool {
	line, ok := p.read(path)
	if !ok {
		return false
	}
	return parseFields(line, skip, out)
}

func parseFields(line []byte, skip int, out []uint64) bool {
	field := -skip
	for _, c := range line {
		switch {
		case c == '\n':
			return field >= len(out)-1
		case c == ' ':
			field++
		case field >= len(out):
			return true
		case c >= '0' && c <= '9' && field >= 0:
			out[field] = out[field]*10 + uint64(c-'0')
		}
	}
	return field >= len(out)-1
}

// startTime is the boot time (/proc/stat's btime) plus the process's
// start in ticks since boot (/proc/self/stat's 22nd field), as procfs
// computes it; 0 when unreadable.
func (p *process) startTime() float64 {
	stat, ok := p.read("/proc/self/stat")
	i := bytes.LastIndexByte(stat, ')')
	var ticks [1]uint64
	// After the command's closing parenthesis, field 3 is the first.
	if !ok || i < 0 || !parseFields(stat[i+1:], 22-3+1, ticks[:]) {
		return 0
	}
	text, ok := p.read("/proc/stat")
	if !ok {
		return 0
	}
	_, after, found := bytes.Cut(text, []byte("\nbtime "))
	var btime [1]uint64
	if !found || !parseFields(after, 0, btime[:]) {
		return 0
	}
	return float64(btime[0]) + float64(ticks[0])/userHZ
}

// openFDs counts the entries of /proc/self/fd, the descriptor it opens to
// read them included, as procfs does.
func (p *process) openFDs() (int, bool) {
	fd, err := syscall.Open("/proc/self/fd", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	defer syscall.Close(fd)
	count := 0
	for {
		n, err := syscall.ReadDirent(fd, p.buf[:])
		if err != nil {
			return 0, false
		}
		if n <= 0 {
			return count, true
		}
		// linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
		for rec := p.buf[:n]; len(rec) >= 20; {
			reclen := int(rec[16]) | int(rec[17])<<8
			if reclen < 20 || reclen > len(rec) {
				return 0, false
			}
			if name := rec[19:reclen]; !bytes.HasPrefix(name, []byte(".\x00")) && !bytes.HasPrefix(name, []byte("..\x00")) {
				count++
			}
			rec = rec[reclen:]
		}
	}
}
