package server

import (
	"strings"
)

// acceptsGzip reads an Accept-Encoding header (RFC 9110 12.5.3) and is
// true when gzip is acceptable and preferred at least as much as the
// uncompressed identity: listed (or matched by "*") with a quality above
// 0 and not below identity's. "x-gzip" is gzip (RFC 9110 8.4.1.3); codings
// and "q" are case-insensitive; a malformed quality refuses its coding.
// Identity is what a client gets otherwise, even one that refused it too:
// every client reads it. An empty or absent header asks for identity.
func acceptsGzip(header string) bool {
	// The quality of each coding this reads; -1 while unlisted.
	gz, identity, star := -1.0, -1.0, -1.0
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		var q *float64
		switch coding = strings.TrimSpace(coding); {
		case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
			q = &gz
		case strings.EqualFold(coding, "identity"):
			q = &identity
		case coding == "*":
			q = &star
		default:
			continue
		}
		if *q < 0 { // the first entry for a coding counts
			*q = quality(params)
		}
	}
	star = max(star, 0) // unlisted, "*" accepts nothing
	if gz < 0 {
		gz = star
	}
	if identity < 0 {
		// Unlisted, identity is acceptable but preferred to nothing
		// listed; "*" gives it its quality.
		identity = star
	}
	return gz > 0 && gz >= identity
}

// quality is the q parameter among an Accept-Encoding entry's parameters:
// 1 when absent, 0 when malformed (RFC 9110 12.4.2: "0" or "1" with at
// most three decimals, at most 1).
func quality(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			return parseQuality(strings.TrimSpace(v))
		}
	}
	return 1
}

func parseQuality(v string) float64 {
	whole, frac, dot := strings.Cut(v, ".")
	if len(frac) > 3 || (whole != "0" && whole != "1") || (dot && strings.Trim(frac, "0123456789") != "") {
		return 0
	}
	if whole == "1" {
		if strings.Trim(frac, "0") != "" {
			return 0 // above 1
		}
		return 1
	}
	q := 0.0
	for i, d := range frac {
		q += float64(d-'0') / [3]float64{10, 100, 1000}[i]
	}
	return q
}
