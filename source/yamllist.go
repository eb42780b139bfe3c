package source

import (
	"bytes"
)

// splitYAMLList cuts a YAML document of the shape `oc get -o yaml` writes
// (top-level keys at column 0, "items:" followed by block sequence entries
// "- ..." at column 0) into the document without its items and the text of
// each item, re-indented to stand alone. Each item is then decoded on its
// own: decoding a 100,000-item List whole builds several copies of the
// tree. ok is false for any other shape (flow style, items indented, no
// items), which the caller decodes whole.
func splitYAMLList(doc []byte) (head []byte, items [][]byte, ok bool) {
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
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i+1], doc[i+1:]
		} else {
			doc = nil
		}
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
			item = append(item, line...)
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
