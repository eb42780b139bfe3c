package snapshot

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

// objectHead cuts, from a YAML object in block style (its keys at one
// indentation, as `oc get -o yaml` writes them and a streamed List's items
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
