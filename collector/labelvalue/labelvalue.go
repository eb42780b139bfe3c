// Package labelvalue bounds label values taken from object content, so a
// careless or hostile object cannot blow up a scrape. It only makes the
// value valid UTF-8 (plaintext.ValidUTF8) and clips it: text shown as an
// excerpt is cleaned where it is cut (classify). It depends on the
// standard library and plaintext only, so its fuzz target builds in
// seconds.
package labelvalue

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"

	"github.com/ocl-exporter/ocl_exporter/plaintext"
)

// MaxBytes bounds every label value the collectors emit. Values
// come from object content (names, image references, condition reasons),
// which a careless or hostile writer can make megabytes long; no real name
// or image reference comes near it (names stop at 253 bytes).
const MaxBytes = 1024

// truncatedMarker ends a shortened value, followed by the first 12 hex
// digits of the SHA-256 of the whole value and ")": two long values that
// share the prefix stay two series, instead of failing the render as
// duplicates.
const truncatedMarker = "...(truncated sha256:"

// Bound returns v when it is valid UTF-8 of at most
// MaxBytes, else the longest prefix that ends on a character
// boundary and leaves room for the marker, then the marker. Invalid UTF-8
// becomes U+FFFD first (plaintext.ValidUTF8): the client library refuses
// it.
func Bound(v string) string {
	if len(v) <= MaxBytes && utf8.ValidString(v) {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	v = plaintext.ValidUTF8(v)
	if len(v) <= MaxBytes {
		return v
	}
	suffix := truncatedMarker + hex.EncodeToString(sum[:6]) + ")"
	cut := MaxBytes - len(suffix)
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut] + suffix
}
