package scale

import (
	"fmt"
	"math"
	"strings"
)

// panel is one chart of the plot: a value of each result against nodes.
type panel struct {
	title string
	value func(Result) float64
}

var panels = []panel{
	{"Resident memory after sync (MiB)", func(r Result) float64 { return r.RSSMiB }},
	{"Scrape latency p99 (ms)", func(r Result) float64 { return r.ScrapeP99Ms }},
}

var colors = map[string]string{Ours: "#1f77b4", KSM: "#d62728"}

// Plot draws each panel against node count (log scale) for both exporters
// as a standalone SVG, with nothing but the results as input.
func Plot(rs []Result) []byte {
	const w, h, pad, left, bottom = 420, 300, 20, 55, 45
	ns := sizes(rs)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w*len(panels), h+30)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	if len(ns) == 0 {
		b.WriteString("</svg>\n")
		return []byte(b.String())
	}
	lo, hi := math.Log10(float64(ns[0])), math.Log10(float64(ns[len(ns)-1]))
	if hi == lo {
		hi = lo + 1
	}
	for i, p := range panels {
		x0, y0 := float64(i*w+left), float64(pad+20)
		pw, ph := float64(w-left-pad), float64(h-bottom-pad-20)
		top := 0.0
		for _, r := range rs {
			top = math.Max(top, p.value(r))
		}
		top = niceCeil(top)
		x := func(n int) float64 { return x0 + (math.Log10(float64(n))-lo)/(hi-lo)*pw }
		y := func(v float64) float64 { return y0 + ph - v/top*ph }
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+pw/2, pad, p.title)
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", x0, y0, pw, ph)
		for t := 0; t <= 4; t++ {
			v := top * float64(t) / 4
			fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">%g</text>`+"\n",
				x0, x0+pw, y(v), y(v), x0-5, y(v)+4, v)
		}
		for _, n := range ns {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", x(n), y0+ph+16, n)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">nodes (log scale)</text>`+"\n", x0+pw/2, y0+ph+34)
		for j, e := range []string{Ours, KSM} {
			var pts []string
			for _, n := range ns {
				if r := find(rs, e, n); r != nil {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(n), y(p.value(*r))))
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x(n), y(p.value(*r)), colors[e])
				}
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), colors[e])
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="%s">%s</text>`+"\n", x0+8, y0+16+float64(j)*16, colors[e], e)
		}
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}
