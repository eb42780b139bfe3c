package collector

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// MaxLabelValueBytes bounds every label value the collectors emit. Values
// come from object content (names, image references, condition reasons),
// which a careless or hostile writer can make megabytes long; no real name
// or image reference comes near it (names stop at 253 bytes).
const MaxLabelValueBytes = 1024

// truncatedMarker ends a shortened value, followed by the first 12 hex
// digits of the SHA-256 of the whole value and ")": two long values that
// share the prefix stay two series, instead of failing the render as
// duplicates.
const truncatedMarker = "...(truncated sha256:"

// boundLabelValue returns v when it is valid UTF-8 of at most
// MaxLabelValueBytes, else the longest prefix that ends on a character
// boundary and leaves room for the marker, then the marker. Invalid UTF-8
// becomes U+FFFD first: the client library refuses it.
func boundLabelValue(v string) string {
	if len(v) <= MaxLabelValueBytes && utf8.ValidString(v) {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	v = strings.ToValidUTF8(v, "\uFFFD")
	if len(v) <= MaxLabelValueBytes {
		return v
	}
	suffix := truncatedMarker + hex.EncodeToString(sum[:6]) + ")"
	cut := MaxLabelValueBytes - len(suffix)
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + suffix
}
