package classify

import (
	"strings"
	"unicode/utf8"

	"github.com/ocl-exporter/ocl_exporter/plaintext"
)

// Message is one piece of error text and where it was read from.
type Message struct {
	Origin Origin
	// Reason is the structured reason field when the source has one: the
	// event reason, the container state reason, the condition reason.
	Reason string
	Text   string
}

// Result is the class of a message and the fragment that decided it.
type Result struct {
	Class Class
	// Excerpt is the line, or the part of a long line, that decided the
	// class: trimmed, valid UTF-8, at most MaxExcerpt bytes. For Unknown it
	// is the last error line, so that an alert can still quote something.
	Excerpt string
}

// MaxExcerpt bounds Result.Excerpt, in bytes.
const MaxExcerpt = 200

// Bounds on the work done for one message. Termination messages are at
// most 4 KiB (2 KiB when read from the log) and node reasons 2000 bytes,
// so these only bite on input nobody should be sending.
const (
	maxScan  = 64 << 10 // bytes read from the end of the text
	maxLines = 512      // candidate lines examined
	maxBack  = 64       // lines searched backwards for push or pull words
)

// Classify returns the class of m. It never fails: text that names no
// known cause is Unknown.
func Classify(m Message) Result {
	if c, ok := signals[signal{m.Origin, m.Reason}]; ok {
		return Result{Class: c, Excerpt: reasonExcerpt(m)}
	}

	text := tail(m.Text)
	s := scan{text: text, lower: asciiLower(text), in: m.stages(), log: m.Origin.isLog()}
	return s.run()
}

// scan reads a message's lines from the last to the first.
type scan struct {
	text, lower string // same byte offsets: lower only folds ASCII
	in          stages
	log         bool
}

// run returns the class of the last line that a specific rule decides.
// Failing that, it returns the last line a generic rule decides; in a log
// that search stops at the start of the step that failed, because the
// cause behind a wrapper ("building at STEP") is printed inside its step.
// Failing that, a log's last retry warning: when every attempt failed with
// the same cause, the tool may stop without printing it as an error.
func (s scan) run() Result {
	var fallback, retry Result // from a generic rule, a retry warning
	lastLo, lastHi := 0, 0     // last candidate line, quoted for Unknown
	retryLo, retryHi := 0, 0   // last retry warning, quoted if no candidate
	seen := 0
	for end := len(s.text); end > 0 && seen < maxLines; {
		start := strings.LastIndexByte(s.text[:end], '\n') + 1
		lo, hi := trimBounds(s.text, start, end)
		end = start - 1
		if lo == hi {
			continue
		}
		line := s.lower[lo:hi]
		if s.log {
			if noise(line) {
				if fallback.Class != "" && stepBoundary(line) {
					break
				}
				if retryHi == 0 && strings.Contains(line, retryWord) {
					retryLo, retryHi = lo, hi
					retry, _ = s.decide(lo, hi)
				}
				continue
			}
			if !containsAny(line, errorWords) {
				continue
			}
		}
		if seen++; seen == 1 {
			lastLo, lastHi = lo, hi
		}
		res, r := s.decide(lo, hi)
		if r == nil {
			continue
		}
		if !r.generic {
			return res
		}
		if fallback.Class == "" {
			fallback = res
		}
	}
	switch {
	case fallback.Class != "":
		return fallback
	case retry.Class != "":
		return retry
	case seen == 0 && retryHi > 0:
		lastLo, lastHi = retryLo, retryHi
	}
	return Result{Class: Unknown, Excerpt: clip(s.text[lastLo:lastHi], 0)}
}

// decide returns the class the first matching rule gives the line
// s.text[lo:hi] and that rule, or a nil rule when none matches.
func (s scan) decide(lo, hi int) (Result, *rule) {
	r, at, ok := s.match(lo, hi)
	if !ok {
		return Result{}, nil
	}
	res := Result{Class: r.class, Excerpt: clip(s.text[lo:hi], at-lo)}
	if r.push != "" && s.pushing(lo, at) {
		res.Class = r.push
	}
	return res, r
}

// match returns the first rule, in table order, that matches the line
// s.lower[lo:hi], and the offset in s.text where it matched.
func (s scan) match(lo, hi int) (*rule, int, bool) {
	line := s.lower[lo:hi]
	var tri trigrams
	tri.fill(line)
	for i := range rules {
		r := &rules[i]
		if r.in&s.in == 0 {
			continue
		}
		for _, p := range r.compiled {
			if !tri.has(p.first) {
				continue
			}
			if at := p.index(line); at >= 0 {
				return r, lo + at, true
			}
		}
	}
	return nil, 0, false
}

// pushing reports whether the registry failure at offset at, on the line
// starting at lo, happened during a push. The outermost operation named on
// the line decides ("pushing image ...: writing blob: ..."); failing that,
// the nearest line above that names one (such as the set -x trace of
// "buildah push"). With no word at all it is a pull: the build pulls
// before it pushes.
func (s scan) pushing(lo, at int) bool {
	if push, ok := direction(s.lower[lo:at]); ok {
		return push
	}
	end := lo - 1
	for range maxBack {
		if end <= 0 {
			break
		}
		start := strings.LastIndexByte(s.lower[:end], '\n') + 1
		if push, ok := direction(s.lower[start:end]); ok {
			return push
		}
		end = start - 1
	}
	return false
}

// direction returns whether the first push or pull word in line is a push
// word, and whether there was one.
func direction(line string) (push, ok bool) {
	first := -1
	for _, w := range pushWords {
		if i := strings.Index(line, w); i >= 0 && (first < 0 || i < first) {
			first, push = i, true
		}
	}
	for _, w := range pullWords {
		if i := strings.Index(line, w); i >= 0 && (first < 0 || i < first) {
			first, push = i, false
		}
	}
	return push, first >= 0
}

// noise reports whether a lowercased log line is build progress.
func noise(line string) bool {
	if hasAnyPrefix(stripStage(line), noisePrefixes) {
		return true
	}
	return containsAny(line, noiseWords)
}

// stepBoundary reports whether a noise line starts a build step or the
// build script's next buildah command.
func stepBoundary(line string) bool {
	line = stripStage(line)
	return strings.HasPrefix(line, "step ") || strings.HasPrefix(line, "+ buildah ")
}

// stripStage drops the "[1/2] " stage prefix of multi-stage STEP lines.
func stripStage(line string) string {
	if strings.HasPrefix(line, "[") {
		if i := strings.Index(line, "] "); i > 0 && i < 16 {
			return line[i+2:]
		}
	}
	return line
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// tail returns at most the last maxScan bytes of s, starting at a line.
func tail(s string) string {
	if len(s) <= maxScan {
		return s
	}
	s = s[len(s)-maxScan:]
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// asciiLower lowercases ASCII letters only, so byte offsets into the result
// are offsets into s. Error text worth matching is ASCII.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && (s[i] < 'A' || 'Z' < s[i]) {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if 'A' <= b[i] && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	return string(b)
}

// trimBounds narrows [lo, hi) of s to exclude surrounding ASCII space.
func trimBounds(s string, lo, hi int) (int, int) {
	for lo < hi && isSpace(s[lo]) {
		lo++
	}
	for hi > lo && isSpace(s[hi-1]) {
		hi--
	}
	return lo, hi
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// reasonExcerpt quotes a structured reason with the last line of its
// message. A log tail's last line is whatever ran when the container
// stopped, so there the reason stands alone.
func reasonExcerpt(m Message) string {
	if m.Origin.isLog() {
		return clip(m.Reason, 0)
	}
	text := tail(m.Text)
	end := len(text)
	for end > 0 {
		start := strings.LastIndexByte(text[:end], '\n') + 1
		if lo, hi := trimBounds(text, start, end); lo < hi {
			return clip(m.Reason+": "+text[lo:hi], 0)
		}
		end = start - 1
	}
	return clip(m.Reason, 0)
}

// ellipsis marks where clip cut a line.
const ellipsis = "…"

// clip returns a MaxExcerpt-byte window of line that starts a little before
// the match at lo and runs as far to the right as it can: error chains read
// from the outermost operation to the innermost cause, so what follows the
// match explains it. The text is plaintext.Clean'd first, so the excerpt
// is safe in a label, an alert description and a report.
func clip(line string, lo int) string {
	line = plaintext.Clean(line)
	lo = min(lo, len(line))
	if t := strings.TrimSpace(line); len(t) <= MaxExcerpt {
		return t
	}
	budget := MaxExcerpt - 2*len(ellipsis)
	start := max(0, lo-budget/5)
	end := min(len(line), start+budget)
	start = max(0, end-budget)
	start, end = wordBounds(line, start, end)
	out := strings.TrimSpace(line[start:end])
	if start > 0 {
		out = ellipsis + out
	}
	if end < len(line) {
		out += ellipsis
	}
	return out
}

// maxWordCut is how far wordBounds moves a cut to reach a space: a
// longer "word" (a digest, a URL) is cut inside, on a rune boundary.
const maxWordCut = 24

// wordBounds moves a window's cuts inward to the nearest space, so an
// excerpt starts and ends on whole words ("…Machine OS Builder", not
// "…hine OS Builder"), or, without a space near, to a rune boundary.
func wordBounds(line string, start, end int) (int, int) {
	if start > 0 && !isSpace(line[start-1]) {
		if i := strings.IndexByte(line[start:min(end, start+maxWordCut)], ' '); i >= 0 {
			start += i + 1
		}
	}
	for start < end && !utf8.RuneStart(line[start]) {
		start++
	}
	if end < len(line) && !isSpace(line[end]) {
		if i := strings.LastIndexByte(line[max(start, end-maxWordCut):end], ' '); i >= 0 {
			end = max(start, end-maxWordCut) + i
		}
	}
	for end > start && end < len(line) && !utf8.RuneStart(line[end]) {
		end--
	}
	return start, end
}
