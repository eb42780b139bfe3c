package snapshot

// JSON documents read token by token: a List's items one at a time, the
// rest of an object whole, or passed over for a kind read from its
// metadata alone (stream.go has the YAML side).

import (
	"encoding/json"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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
