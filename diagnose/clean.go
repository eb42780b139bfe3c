package diagnose

import "github.com/ocl-exporter/ocl_exporter/plaintext"

// clean makes every value of the report safe for every output, once,
// before any writer sees it: see cleanText. The writers add only what
// their format needs (markdown escaping; html/template escapes HTML).
func (r *Report) clean() {
	r.Namespace = cleanText(r.Namespace)
	r.Summary = cleanText(r.Summary)
	cleanChecks(r.Cluster)
	for i := range r.Pools {
		p := &r.Pools[i]
		p.Name, p.MachineOSConfig, p.Summary = cleanText(p.Name), cleanText(p.MachineOSConfig), cleanText(p.Summary)
		for j := range p.Stages {
			cleanChecks(p.Stages[j].Checks)
		}
	}
}

func cleanChecks(checks []Check) {
	for i := range checks {
		c := &checks[i]
		c.Title = cleanText(c.Title)
		for j := range c.Findings {
			f := &c.Findings[j]
			f.Object.Kind, f.Object.Namespace, f.Object.Name = cleanText(f.Object.Kind), cleanText(f.Object.Namespace), cleanText(f.Object.Name)
			f.Field, f.Message, f.Excerpt, f.LogFile = cleanText(f.Field), cleanText(f.Message), cleanText(f.Excerpt), cleanText(f.LogFile)
			for k := range f.Commands {
				f.Commands[k] = cleanText(f.Commands[k])
			}
		}
	}
}

// cleanText is plaintext.Line: the cleaning every report shares.
var cleanText = plaintext.Line
