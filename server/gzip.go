package server

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"sync"
	"sync/atomic"
)

// A scrape that takes gzip is one gzip member (RFC 1952) whose DEFLATE
// stream (RFC 1951) is made of the parts of the exposition, each
// compressed once and kept until it changes: the render's blocks (once
// per render, by the first scrape that takes gzip), the registry's (once
// per change of the exporter's own counters), then the metrics that
// change with every scrape, stored (about 5 KB: compressing them cost a
// third of a scrape's CPU, for 4 KB less). A DEFLATE stream is a
// sequence of blocks, each with its own header: a kept part ends with a
// sync flush (an empty stored block, so it ends on a byte boundary and
// is not final), and blocks from a fresh compressor, which refer to
// nothing before their own text, or stored blocks, may follow. The
// member's CRC-32 goes on from the render's over the rest. Every gzip
// reader decodes it, those that stop after the first member too (curl,
// browsers). Compressing the whole text on every scrape cost three
// quarters of a scrape's CPU (docs/performance.md).

// gzipHeader starts the member as compress/gzip does at BestSpeed: no
// name, no time, "fastest" (XFL 4), unknown OS (255).
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255}

// part is a piece of the exposition, the same text for as long as its key
// holds, with its DEFLATE blocks once a scrape asked for them.
type part struct {
	key  uint64
	text []byte
	// first is set for the part that starts the member, whose blocks
	// follow the gzip header.
	first bool

	once   sync.Once
	blocks []byte
	crc    uint32 // of text alone
}

// deflated is the part's blocks (after the gzip header for the first
// part) and its text's CRC-32, compressed on the first call.
func (p *part) deflated() ([]byte, uint32) {
	p.once.Do(func() {
		var b bytes.Buffer
		// The exposition compresses about twentyfold.
		b.Grow(len(gzipHeader) + len(p.text)/16 + 64)
		if p.first {
			b.Write(gzipHeader)
		}
		fw := flateWriters.Get().(*flate.Writer)
		defer flateWriters.Put(fw)
		fw.Reset(&b)
		_, _ = fw.Write(p.text) // a bytes.Buffer takes every write
		_ = fw.Flush()
		p.blocks, p.crc = b.Bytes(), crc32.ChecksumIEEE(p.text)
	})
	return p.blocks, p.crc
}

// partCache keeps the latest part of a kind.
type partCache struct {
	mu   sync.Mutex // one part made at a time: scrapes that need it wait
	last atomic.Pointer[part]
}

// get is the part of key: the one kept, or one made of text() now and
// kept unless a newer key is (keys grow).
func (c *partCache) get(key uint64, first bool, text func() []byte) *part {
	if p := c.last.Load(); p != nil && p.key == key {
		return p
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.last.Load()
	if p != nil && p.key == key {
		return p
	}
	fresh := &part{key: key, text: text(), first: first}
	if p == nil || key > p.key {
		c.last.Store(fresh)
	}
	return fresh
}

// appendLast appends text as the member's last blocks, stored, and its
// trailer: the CRC-32 and length of the whole text, whose part before
// text has crc and length size. It follows a byte boundary.
func appendLast(out *bytes.Buffer, text []byte, crc uint32, size int) {
	for rest := text; ; {
		n := min(len(rest), maxStored)
		final := byte(0)
		if n == len(rest) {
			final = 1
		}
		// BFINAL, BTYPE 00 (stored), padding to the byte; LEN, NLEN.
		out.Write([]byte{final, byte(n), byte(n >> 8), ^byte(n), ^byte(n >> 8)})
		out.Write(rest[:n])
		if rest = rest[n:]; final == 1 {
			break
		}
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc32.Update(crc, crc32.IEEETable, text))
	// ISIZE is the length modulo 2^32 (RFC 1952 2.3.1).
	binary.LittleEndian.PutUint32(trailer[4:], uint32(uint64(size+len(text))&0xffffffff))
	out.Write(trailer[:])
}

// maxStored is the most a stored block holds (RFC 1951 3.2.4).
const maxStored = 1<<16 - 1

// flateWriters are reused: a writer's state is a few hundred kilobytes.
// BestSpeed still shrinks the exposition about twentyfold, at a fifth of
// the default level's cost.
var flateWriters = sync.Pool{New: func() any {
	fw, _ := flate.NewWriter(nil, flate.BestSpeed) // the level is valid
	return fw
}}
