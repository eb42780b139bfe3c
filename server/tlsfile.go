package server

import (
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/ocl-exporter/ocl_exporter/regularfile"
)

// tlsFileRecheck bounds how often a TLS file is looked at again: at most
// once a second, however many connections arrive.
const tlsFileRecheck = time.Second

// tlsFile is a private copy of a file the web config names (a
// certificate, a key, a client CA), which exporter-toolkit reads on every
// handshake. The original is read only as a regular file of bounded
// size, when it changed; a read that fails keeps the last good copy.
type tlsFile struct {
	key, source string
	maxBytes    int64
	copy        privateCopy

	mu      sync.Mutex
	checked time.Time
	seen    os.FileInfo // the original as last read, or refused
}

// newTLSFile reads source into a new private copy.
func newTLSFile(key, source string, maxBytes int64) (*tlsFile, error) {
	info, err := os.Stat(source)
	if err != nil {
		return nil, err
	}
	b, err := regularfile.ReadFile(source, maxBytes)
	if err != nil {
		return nil, err
	}
	c, err := newPrivateCopy(b)
	if err != nil {
		return nil, err
	}
	return &tlsFile{key: key, source: source, maxBytes: maxBytes, copy: c, checked: time.Now(), seen: info}, nil
}

// refresh reads the original again if it changed since it was last
// read: another file at the path (a Secret volume swaps a link), another
// size, time or type. The copy is replaced whole, so a handshake reads
// the old or the new file, never a mix.
func (f *tlsFile) refresh(logger *slog.Logger) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if now.Sub(f.checked) < tlsFileRecheck {
		return
	}
	f.checked = now
	info, err := os.Stat(f.source)
	if err != nil || sameFile(info, f.seen) {
		return
	}
	f.seen = info
	b, err := regularfile.ReadFile(f.source, f.maxBytes)
	if err == nil {
		err = f.copy.replace(b)
	}
	if err != nil {
		logger.Error("the web config's TLS file was not read again; the last good one is served", "key", f.key, "err", err)
	}
}

func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime()) && a.Mode() == b.Mode()
}
