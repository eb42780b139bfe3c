package source

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
)

// documentReader reads a YAML stream's documents one at a time, as
// utilyaml.YAMLReader does: split at lines that start with "---" and hold
// nothing else but a comment (the first one kept in its document), line
// ends made "\n". It reads lines in place, where that reader allocates
// each anew: 12 times the bytes of a document of short lines.
type documentReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer
}

func (d *documentReader) Read() ([]byte, error) {
	var doc []byte
	for {
		line, err := d.line()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if bytes.HasPrefix(line, []byte("---")) {
			if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
				return nil, fmt.Errorf("invalid YAML document separator: %s", rest)
			}
			if len(doc) > 0 {
				return doc, nil
			}
		}
		if err != nil {
			if len(doc) > 0 {
				return doc, nil
			}
			return nil, err
		}
		doc = appendDoubling(doc, line)
	}
}

// line is the next line, ending in "\n", valid until the next call.
func (d *documentReader) line() ([]byte, error) {
	line, err := d.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		d.long = append(d.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = d.r.ReadSlice('\n')
			d.long = appendDoubling(d.long, line)
		}
		line = d.long
	}
	switch {
	case errors.Is(err, io.EOF) && len(line) > 0:
		return append(line[:len(line):len(line)], '\n'), nil // the last line, unterminated
	case err != nil:
		return nil, err
	}
	if n := len(line); n > 1 && line[n-2] == '\r' {
		line[n-2], line = '\n', line[:n-1]
	}
	return line, nil
}

// splitYAMLList cuts a YAML document of the shape `oc get -o yaml` writes
// (top-level keys at column 0, "items:" followed by block sequence entries
// "- ..." at column 0) into the document without its items and the text of
// each item, re-indented to stand alone. Each item is then decoded on its
// own: decoding a 100,000-item List whole builds several copies of the
// tree. ok is false for any other shape (flow style, items indented, no
// items), which the caller decodes whole.
func splitYAMLList(doc []byte) (head []byte, items [][]byte, ok bool) {
	if !bytes.HasPrefix(doc, []byte("items:")) && !bytes.Contains(doc, []byte("\nitems:")) {
		return nil, nil, false // no List: nothing copied
	}
	var (
		inItems bool
		item    []byte
		found   bool
	)
	flush := func() {
		if item != nil {
			items = append(items, item)
			item = nil
		}
	}
	for len(doc) > 0 {
		var line []byte
		line, doc = cutLine(doc)
		top := len(line) > 0 && line[0] != ' ' && line[0] != '\t' && line[0] != '\n' && line[0] != '\r' && line[0] != '#'
		switch {
		case top && bytes.Equal(bytes.TrimRight(line, " \r\n"), []byte("items:")):
			if found {
				return nil, nil, false // a second items key: not this shape
			}
			inItems, found = true, true
		case inItems && bytes.HasPrefix(line, []byte("- ")):
			flush()
			item = append(append([]byte(nil), "  "...), line[2:]...)
		case inItems && bytes.Equal(bytes.TrimRight(line, "\r\n"), []byte("-")):
			flush()
			item = []byte{'\n'}
		case inItems && top:
			flush()
			inItems = false
			head = append(head, line...)
		case inItems:
			if item == nil {
				if len(bytes.TrimSpace(line)) == 0 || bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
					continue
				}
				return nil, nil, false // items: followed by something else than "- "
			}
			item = appendDoubling(item, line)
		default:
			head = append(head, line...)
		}
	}
	flush()
	if !found || len(items) == 0 {
		return nil, nil, false
	}
	return head, items, true
}

// objectHead cuts, from a YAML object in block style (its keys at one
// indentation, as `oc get -o yaml` writes them and splitYAMLList's items
// hold them), the entries apiVersion, kind and metadata, whole lines at a
// time: what is read of a kind kept as metadata only. ok is false for
// any other shape.
func objectHead(doc []byte) (head []byte, ok bool) {
	indent := -1
	keep := false
	for len(doc) > 0 {
		var line []byte
		line, doc = cutLine(doc)
		if bytes.HasPrefix(line, []byte("---")) {
			continue // the document's start, which utilyaml.YAMLReader keeps
		}
		text := bytes.TrimLeft(line, " ")
		if len(bytes.TrimSpace(text)) == 0 || text[0] == '#' {
			if keep {
				head = append(head, line...)
			}
			continue
		}
		n := len(line) - len(text)
		if indent < 0 {
			indent = n
		}
		if n < indent || text[0] == '\t' {
			return nil, false
		}
		if n == indent {
			key, _, found := bytes.Cut(text, []byte(":"))
			if !found || len(key) == 0 || bytes.IndexByte([]byte("-?{[\"'&*!|>%@`"), key[0]) >= 0 {
				return nil, false // not a plain key of a block mapping
			}
			switch string(key) {
			case "apiVersion", "kind", "metadata":
				keep = true
			default:
				keep = false
			}
		}
		if keep {
			head = append(head, line...)
		}
	}
	return head, indent >= 0
}

// cutLine cuts doc's first line, its "\n" included.
func cutLine(doc []byte) (line, rest []byte) {
	if i := bytes.IndexByte(doc, '\n'); i >= 0 {
		return doc[:i+1], doc[i+1:]
	}
	return doc, nil
}

// appendDoubling is append that doubles what it allocates: append grows
// a large slice by a quarter, and a document of megabytes read line by
// line then allocates five times its size.
func appendDoubling(dst, line []byte) []byte {
	if len(dst)+len(line) > cap(dst) {
		dst = slices.Grow(dst, max(len(line), cap(dst)))
	}
	return append(dst, line...)
}
