package snapshot

// What an archive keeps of an entry of a kind read from its metadata
// alone (archive.go entry).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// metadataLines reads a YAML file of a kind kept as metadata only and
// returns it without what is never read: every key but apiVersion, kind,
// metadata and items, of each document and of each item of a List in
// the shape oc writes. An archive keeps its entries until they are read,
// and a must-gather's MachineConfigs are megabytes of Ignition. A top
// line that is no plain key keeps the rest whole, and a file that ends
// inside a line still does (what shows a gather's cut).
func metadataLines(r io.Reader, limit int64) ([]byte, error) {
	last := &lastByte{r: io.LimitReader(r, limit+1)}
	d := &documentReader{r: bufio.NewReader(last)}
	f := metadataFilter{keep: true}
	var out []byte
	var n int64
	kept := false // the last line
	for {
		line, err := d.line()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		n += int64(len(line))
		before := len(out)
		out = f.add(out, line)
		kept = len(out)-before == len(line) && bytes.HasSuffix(out, line)
	}
	switch {
	case n > limit:
		return nil, fmt.Errorf("more than the %d bytes a snapshot file may hold", limit)
	case n == 0 || last.last == '\n':
	case kept:
		out = out[:len(out)-1] // the line the reader ended, unterminated as it was
	default:
		out = append(out, '#') // the file ends inside a line
	}
	return out, nil
}

// metadataFilter is where metadataLines is in a file.
type metadataFilter struct {
	whole   bool // a top line that is no plain key: the rest is kept
	keep    bool // the current top-level key is kept
	inItems bool // in a List's items, entries "- " at column 0
	inItem  bool
	keepIt  bool // the current item key is kept
}

// metadataKey: key is one metadataLines keeps, matched as encoding/json
// matches a field's name, whatever its case.
func metadataKey(key string) bool {
	return slices.ContainsFunc([]string{"apiVersion", "kind", "metadata", "items"}, func(k string) bool { return strings.EqualFold(k, key) })
}

// add appends to out what is kept of line.
func (f *metadataFilter) add(out, line []byte) []byte {
	text := bytes.TrimSpace(line)
	switch {
	case f.whole:
	case bytes.HasPrefix(line, []byte("---")):
		*f = metadataFilter{keep: true}
	case len(text) == 0 || text[0] == '#':
	case line[0] != ' ' && !bytes.HasPrefix(line, []byte("- ")):
		key, ok := plainKey(line)
		f.whole = !ok
		f.keep, f.inItems, f.inItem = metadataKey(key), strings.EqualFold(key, "items"), false
	case f.inItems && bytes.Equal(text, []byte("-")) && line[0] == '-':
		f.inItem, f.keepIt = true, true // its keys on the lines that follow
	case f.inItems && bytes.HasPrefix(line, []byte("- ")):
		key, ok := plainKey(line[2:])
		f.inItem, f.keepIt = true, ok && metadataKey(key)
		if !ok {
			f.whole = true
		} else if !f.keepIt {
			return append(out, "-\n"...) // the item starts, without this key
		}
	case f.inItem && bytes.HasPrefix(line, []byte("  ")) && line[2] != ' ':
		key, ok := plainKey(line[2:])
		f.keepIt = !ok || metadataKey(key)
	}
	if f.whole || (f.inItem && f.keepIt) || (!f.inItem && f.keep) {
		out = append(out, line...)
	}
	return out
}

// plainKey is the key of a block mapping's line "key: ...", ok false for
// anything else (a flow collection, a quoted or complex key, an anchor).
func plainKey(line []byte) (string, bool) {
	k, _, found := bytes.Cut(bytes.TrimSpace(line), []byte(":"))
	if !found || len(k) == 0 || bytes.IndexByte([]byte("-?{[\"'&*!|>%@`"), k[0]) >= 0 {
		return "", false
	}
	return string(bytes.TrimSpace(k)), true
}
