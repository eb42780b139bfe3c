package review

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Bounds of the querier's warnings a review keeps: a Thanos querier whose
// stores fail says one per store with every answer, and a hostile one can
// send a hundred thousand. Each distinct warning is shown once with its
// count, the first maxWarnings of them; later ones are only counted.
const (
	maxWarnings     = 20
	maxWarningBytes = 1024
)

// warningTally counts the warnings of every answer in bounded memory.
type warningTally struct {
	count map[string]int
	// more counts the warnings past the first maxWarnings distinct ones.
	more int
}

func (w *warningTally) add(ws []string) {
	if w.count == nil {
		w.count = map[string]int{}
	}
	for _, s := range ws {
		if len(s) > maxWarningBytes {
			s = strings.ToValidUTF8(s[:maxWarningBytes], "") + "…"
		}
		if _, held := w.count[s]; held || len(w.count) < maxWarnings {
			w.count[s]++
		} else {
			w.more++
		}
	}
}

// lines are the warnings as a report shows them, sorted, each once.
func (w *warningTally) lines() []string {
	var out []string
	for _, s := range slices.Sorted(maps.Keys(w.count)) {
		if n := w.count[s]; n > 1 {
			s = fmt.Sprintf("%s (%d times)", s, n)
		}
		out = append(out, s)
	}
	if w.more > 0 {
		out = append(out, fmt.Sprintf("%d more warning(s) not shown: a review shows the first %d distinct warnings", w.more, maxWarnings))
	}
	return out
}
