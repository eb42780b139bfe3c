// Package listingtest writes tar archives byte by byte for tests:
// archive/tar's writer refuses the headers an attacker writes (GNU sparse
// maps, names that are not UTF-8), which the readers must still meet.
package listingtest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
)

// Entry is a tar entry: its name, type flag, link target and bytes.
type Entry struct {
	Name     string
	Typeflag byte
	Linkname string
	Data     []byte
}

// Archive writes entries as a USTAR stream, each header's fields as
// given.
func Archive(entries ...Entry) []byte {
	var b bytes.Buffer
	for _, e := range entries {
		h := make([]byte, 512)
		copy(h[0:100], e.Name)
		copy(h[100:108], "0000644\x00")
		copy(h[108:116], "0000000\x00")
		copy(h[116:124], "0000000\x00")
		copy(h[124:136], fmt.Sprintf("%011o\x00", len(e.Data)))
		copy(h[136:148], "00000000000\x00")
		h[156] = e.Typeflag
		copy(h[157:257], e.Linkname)
		copy(h[257:265], "ustar\x0000")
		if e.Typeflag == 'S' { // old GNU sparse: one fragment of its data, 2^62 bytes in all
			copy(h[257:265], "ustar  \x00")
			copy(h[386:398], fmt.Sprintf("%011o\x00", 0))
			copy(h[398:410], fmt.Sprintf("%011o\x00", len(e.Data)))
			h[483] = 0x80 // base-256
			binary.BigEndian.PutUint64(h[487:495], 1<<62)
		}
		copy(h[148:156], "        ")
		sum := 0
		for _, c := range h {
			sum += int(c)
		}
		copy(h[148:156], fmt.Sprintf("%06o\x00 ", sum))
		b.Write(h)
		b.Write(e.Data)
		b.Write(make([]byte, (512-len(e.Data)%512)%512))
	}
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

// PAX encodes PAX records ("<len> <key>=<value>\n") from key, value
// pairs.
func PAX(kv ...string) []byte {
	var b bytes.Buffer
	for i := 0; i+1 < len(kv); i += 2 {
		rec := " " + kv[i] + "=" + kv[i+1] + "\n"
		n := len(rec) + len(strconv.Itoa(len(rec)))
		n = len(rec) + len(strconv.Itoa(n)) // the length counts its own digits
		fmt.Fprintf(&b, "%d%s", n, rec)
	}
	return b.Bytes()
}

// Huge is a size no archive holds: 2^62 bytes.
const Huge = "4611686018427387904"

// Sparse are GNU sparse files at name, in the PAX 1.0, PAX 0.1 and old
// GNU forms, each declaring Huge bytes from one byte the archive holds.
func Sparse(name string) map[string][]Entry {
	sparseMap := []byte("1\n0\n1\n")
	return map[string][]Entry{
		"PAX 1.0": {
			{Name: "PaxHeaders/x", Typeflag: 'x', Data: PAX("GNU.sparse.major", "1", "GNU.sparse.minor", "0", "GNU.sparse.name", name, "GNU.sparse.realsize", Huge)},
			{Name: "x", Typeflag: '0', Data: append(append(sparseMap, make([]byte, 512-len(sparseMap))...), 'E')},
		},
		"PAX 0.1": {
			{Name: "PaxHeaders/x", Typeflag: 'x', Data: PAX("GNU.sparse.major", "0", "GNU.sparse.minor", "1", "GNU.sparse.name", name, "GNU.sparse.size", Huge, "GNU.sparse.numblocks", "1", "GNU.sparse.map", "0,1")},
			{Name: "x", Typeflag: '0', Data: []byte("E")},
		},
		"old GNU": {{Name: name[:min(len(name), 100)], Typeflag: 'S', Data: []byte("E")}},
	}
}
