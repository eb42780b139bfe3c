package snapshot

// Streamed documents: a List is converted an item at a time as its text
// arrives, so that what a file costs in memory is its largest object,
// never the file (issue 50: 64 rendered MachineConfigs in one `oc get`
// List, 45 MB, peaked at 340 MiB). An object is read whole only when it
// is one of the kinds decoded whole: of a MachineConfig, a Node, a Secret
// or a ConfigMap only its apiVersion, kind and metadata are converted.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// yamlDoc is one YAML document being read line by line: its text until
// it shows the shape of an `oc get -o yaml` List (top-level keys at column
// 0, "items:" followed by entries "- " at column 0), then the List's head
// (its keys but the items) and the item being read.
type yamlDoc struct {
	head, item []byte
	// text is the document's whole text while it is small: a List whose
	// items do not stand alone (an alias to another item's anchor) is
	// then read whole, as before it was streamed.
	text     []byte
	textLost bool
	inItems  bool
	found    bool // an items key in this shape
	whole    bool // another shape: the text is read whole, into head
	content  bool // a line other than blank or comment was read
	items    int  // items converted
	// apiVersion and kind, once read at column 0: a document of a kind
	// kept as metadata only keeps no other key's text (skipping).
	apiVersion, kind string
	skipping         bool
}

// nextYAML reads and converts the next document of d, io.EOF after the
// last.
func (st *fileState) nextYAML(d *documentReader) ([]runtime.Object, error) {
	var doc yamlDoc
	var out []runtime.Object
	var pending error // an item's error, which an unread List's head excuses
	for {
		line, err := d.line()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, notValid(err)
		}
		if err == nil && bytes.HasPrefix(line, []byte("---")) {
			if rest := bytes.TrimSpace(line[3:]); len(rest) > 0 && rest[0] != '#' {
				return nil, notValid(fmt.Errorf("invalid YAML document separator: %s", rest))
			}
			if !doc.content {
				// the stream's first separator, or an empty document's:
				// kept, as utilyaml.YAMLReader keeps it, in the count
				// of a document too large
				doc.head = append(doc.head[:0], line...)
				continue
			}
		}
		if err != nil || bytes.HasPrefix(line, []byte("---")) {
			if !doc.content {
				return nil, io.EOF
			}
			return st.endYAML(&doc, out, pending)
		}
		item := doc.add(line)
		if item == nil {
			continue
		}
		if err := st.ctx.Err(); err != nil {
			return nil, err
		}
		objs, err := st.yamlItem(item, doc.items)
		doc.items++
		out = append(out, objs...)
		if err != nil && pending == nil {
			pending = err
		}
	}
}

// add reads one line of the document and returns an item it completes.
func (doc *yamlDoc) add(line []byte) (item []byte) {
	if !doc.textLost {
		doc.text = appendDoubling(doc.text, line)
		if doc.textLost = len(doc.text) > maxObjectBytes; doc.textLost {
			doc.text = nil
		}
	}
	blank := len(bytes.TrimSpace(line)) == 0 || bytes.HasPrefix(bytes.TrimLeft(line, " "), []byte("#"))
	top := !blank && line[0] != ' ' && line[0] != '\t'
	if !doc.content && !blank {
		doc.content = true
		_, key := plainKey(line) // a block mapping's; any other shape is read whole
		doc.whole = !key
	}
	switch {
	case doc.whole:
		doc.head = appendDoubling(doc.head, line)
	case top && !doc.found && bytes.Equal(bytes.TrimRight(line, " \n"), []byte("items:")):
		doc.inItems, doc.found = true, true
	case doc.inItems && (bytes.HasPrefix(line, []byte("- ")) || bytes.Equal(line, []byte("-\n"))):
		item, doc.item = doc.item, append(append([]byte(nil), "  "...), line[min(2, len(line)-1):]...)
	case doc.inItems && top:
		item, doc.item, doc.inItems = doc.item, nil, false
		doc.head = append(doc.head, line...)
	case doc.inItems && doc.item == nil && !blank && doc.items == 0:
		// "items:" followed by something else than "- " at column 0
		// (indented entries): the document is read whole
		doc.head = append(append(doc.head, "items:\n"...), line...)
		doc.inItems, doc.found, doc.whole = false, false, true
	case doc.inItems && doc.item != nil:
		doc.item = appendDoubling(doc.item, line)
	case doc.inItems:
	case top:
		doc.skipping = doc.skipKey(line)
		if !doc.skipping {
			doc.head = append(doc.head, line...)
		}
	case !doc.skipping:
		doc.head = append(doc.head, line...)
	}
	return item
}

// skipKey reads a top-level key's line: whether its value, of an object
// whose kind is kept as metadata only, is left unread.
func (doc *yamlDoc) skipKey(line []byte) bool {
	key, value, _ := bytes.Cut(line, []byte(":"))
	v := string(bytes.Trim(bytes.TrimSpace(value), `"'`))
	switch string(key) {
	case "apiVersion":
		doc.apiVersion = v
	case "kind":
		doc.kind = v
	case "metadata", "items":
	default:
		return keptAsMetadataKind(typeMeta{APIVersion: doc.apiVersion, Kind: doc.kind})
	}
	return false
}

// yamlItem converts the i-th item of a List.
func (st *fileState) yamlItem(text []byte, i int) ([]runtime.Object, error) {
	raw, err := objectJSON(text)
	if err == nil {
		var objs []runtime.Object
		objs, err = st.convert(raw, true)
		if err == nil {
			return objs, nil
		}
	}
	return nil, fmt.Errorf("item %d: %w", i, err)
}

// endYAML converts what is left of the document: its last item and the
// List's head, or the document whole. An item's error stands unless the
// head shows a List of a kind not read (an APIGroupDiscoveryList's items
// have no kind), whose objects are dropped.
func (st *fileState) endYAML(doc *yamlDoc, out []runtime.Object, pending error) ([]runtime.Object, error) {
	if doc.item != nil {
		objs, err := st.yamlItem(doc.item, doc.items)
		doc.items++
		out = append(out, objs...)
		if err != nil && pending == nil {
			pending = err
		}
	}
	raw, err := objectJSON(doc.head)
	if err != nil {
		return nil, err
	}
	if !doc.found {
		return st.convert(raw, false)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return nil, errors.New("not valid YAML or JSON: the List is not a map")
	}
	var tm typeMeta
	_ = json.Unmarshal(raw, &tm) // a map: its keys are read, or none
	st.listNoKind = st.listNoKind || tm.Kind == ""
	if pending != nil && !doc.textLost {
		if whole, err := objectJSON(doc.text); err == nil {
			if objs, err := st.convert(whole, false); err == nil {
				return objs, nil // items that do not stand alone
			}
		}
	}
	return st.endJSONList(raw, out, pending)
}

// metadataOnlyJSON converts, of a YAML object in block style, only its
// apiVersion, kind and metadata when its kind is kept as metadata only
// (objectHead); ok is false for any other kind or shape.
func metadataOnlyJSON(doc []byte) (raw []byte, ok bool) {
	head, ok := objectHead(doc)
	if !ok || len(head) > maxObjectBytes || !metadataKind(head) {
		return nil, false
	}
	raw, err := yaml.YAMLToJSON(head)
	if err != nil || !keptAsMetadata(raw) {
		return nil, false
	}
	return raw, true
}

// metadataKind reads the kind and apiVersion of head (objectHead's, plain
// scalars at its keys' indentation) and says whether that kind is kept
// as metadata only: the cheap test before anything is converted.
func metadataKind(head []byte) bool {
	var apiVersion, kind string
	indent := -1
	for line := range bytes.Lines(head) {
		text := bytes.TrimLeft(line, " ")
		if len(bytes.TrimSpace(text)) == 0 || text[0] == '#' {
			continue
		}
		if n := len(line) - len(text); indent < 0 {
			indent = n
		} else if n != indent {
			continue
		}
		key, value, _ := bytes.Cut(bytes.TrimSpace(text), []byte(":"))
		v := string(bytes.Trim(bytes.TrimSpace(value), `"'`))
		switch string(key) {
		case "apiVersion":
			apiVersion = v
		case "kind":
			kind = v
		}
	}
	return keptAsMetadataKind(typeMeta{APIVersion: apiVersion, Kind: kind})
}
