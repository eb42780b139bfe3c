package source

// Streamed documents: a List is converted an item at a time as its text
// arrives, so that what a file costs in memory is its largest object,
// never the file (issue 50: 64 rendered MachineConfigs in one `oc get`
// List, 45 MB, peaked at 340 MiB). An object is read whole only when it
// is one of the kinds decoded whole: of a MachineConfig, a Node, a Secret
// or a ConfigMap only its apiVersion, kind and metadata are converted.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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

// nextJSON reads and converts the next JSON value of dec, io.EOF after the
// last. An object is read key by key: a List's items one at a time, the
// other keys' values whole.
func (st *fileState) nextJSON(dec *json.Decoder) ([]runtime.Object, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, notValid(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("a %s: %w", tokenType(tok), errNotAnObject)
	}
	var out []runtime.Object
	var pending error
	obj := []byte{'{'}
	items := -1
	var tm typeMeta // apiVersion and kind, as they come
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, notValid(err)
		}
		key, _ := tok.(string)
		if keptAsMetadataKind(tm) && key != "metadata" && key != "items" {
			// of a MachineConfig, a Node, a Secret or a ConfigMap only the
			// metadata is read: the rest is passed over, never held
			if err := skipNext(dec); err != nil {
				return nil, err
			}
			continue
		}
		if key == "items" && items < 0 {
			objs, n, itemErr, err := st.jsonItems(dec)
			if err != nil {
				return nil, err
			}
			items, out, pending = n, append(out, objs...), itemErr
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, notValid(err)
		}
		if len(obj) > 1 {
			obj = append(obj, ',')
		}
		switch key {
		case "apiVersion":
			_ = json.Unmarshal(raw, &tm.APIVersion) // not a string: read as none
		case "kind":
			_ = json.Unmarshal(raw, &tm.Kind)
		}
		k, _ := json.Marshal(key) // a string always marshals
		obj = append(append(append(obj, k...), ':'), raw...)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, notValid(err)
	}
	obj = append(obj, '}')
	if items < 0 {
		return st.convert(obj, false)
	}
	return st.endJSONList(obj, out, pending)
}

// jsonItems converts the items of a List, the value dec reads next, one
// at a time: n is how many, itemErr the first item's error (which an
// unread List excuses), err what stops the read.
func (st *fileState) jsonItems(dec *json.Decoder) (out []runtime.Object, n int, itemErr, err error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, 0, nil, notValid(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		if tok == nil {
			return nil, 0, nil, nil // "items": null
		}
		// the List's kind, which names it, comes later: read on
		return nil, 0, itemsNotAList(tokenType(tok)), skipValue(dec, tok)
	}
	for ; dec.More(); n++ {
		if err := st.ctx.Err(); err != nil {
			return nil, n, nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, n, nil, notValid(err)
		}
		objs, err := st.convert(raw, true)
		out = append(out, objs...)
		if err != nil && itemErr == nil {
			itemErr = fmt.Errorf("item %d: %w", n, err)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, n, nil, notValid(err)
	}
	return out, n, itemErr, nil
}

// endJSONList reads the head (JSON) of a List whose items were converted:
// an item's error stands unless the head is no object's, or a List's of a
// kind not read.
func (st *fileState) endJSONList(head []byte, out []runtime.Object, pending error) ([]runtime.Object, error) {
	var tm typeMeta
	if err := json.Unmarshal(head, &tm); err != nil {
		return nil, fmt.Errorf("reading apiVersion and kind: %w", err)
	}
	if tm.APIVersion == "" && tm.Kind == "" && tm.Metadata == nil {
		return nil, fmt.Errorf("no apiVersion and no kind: %w", errNotAnObject)
	}
	if st.unreadList(tm) {
		return nil, nil
	}
	if nl := itemsNotAList(""); errors.As(pending, &nl) {
		return nil, fmt.Errorf("%s: items is a %s, not a list of objects", orList(tm.Kind), string(nl))
	}
	if pending != nil {
		return nil, pending
	}
	st.claims.list(tm)
	return out, nil
}

// itemsNotAList is a List's items of another JSON type (named).
type itemsNotAList string

func (t itemsNotAList) Error() string { return "items is a " + string(t) }

// keptAsMetadataKind says whether tm names a kind kept as metadata only.
func keptAsMetadataKind(tm typeMeta) bool {
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	k, known := kinds[gv.WithKind(tm.Kind).GroupKind()]
	return err == nil && tm.Kind != "" && known && k.new == nil
}

// skipNext reads past the value dec reads next: held while it is read
// (what a token at a time costs in allocations is ten times more), never
// kept.
func skipNext(dec *json.Decoder) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return notValid(err)
	}
	return nil
}

// skipValue reads past the rest of the value whose first token was tok.
func skipValue(dec *json.Decoder, tok json.Token) error {
	depth := 0
	for {
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
		var err error
		if tok, err = dec.Token(); err != nil {
			return notValid(err)
		}
	}
}

// tokenType names the JSON type of a token.
func tokenType(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return jsonType([]byte{byte(t)})
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "number"
}

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
