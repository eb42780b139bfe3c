package diagnose

// A check being decided: its status follows the findings added to it.

import "fmt"

// pending is a check being decided.
type pending struct{ Check }

func check(id string) *pending {
	sp := spec(id)
	return &pending{Check{ID: id, Title: sp.Title, Status: Passed}}
}

func (p *pending) fail(f Finding) {
	p.Status = Failed
	p.Findings = append(p.Findings, f)
}

// run marks the check in progress, unless it already failed.
func (p *pending) run(f Finding) {
	if p.Status != Failed {
		p.Status = Running
	}
	p.Findings = append(p.Findings, f)
}

// notCaptured marks the check undecidable, unless it already failed or
// runs: the snapshot does not hold the kind it reads.
func (p *pending) notCaptured(f Finding) {
	if p.Status == Passed {
		p.Status = NotCaptured
	}
	p.Findings = append(p.Findings, f)
}

// notCapturedFinding says that o's kind was not captured, so o may exist.
func notCapturedFinding(o Object) Finding {
	return Finding{Object: o, Message: fmt.Sprintf("the snapshot holds no %s at all: whether %s exists is unknown", o.Kind, o.Name)}
}

func (p *pending) done() Check { return p.Check }

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
