package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// The report's charts are inline SVG drawn here, so the HTML file needs no script, no font and
// no network to be read years later.

const (
	chartW      = 960
	chartH      = 260
	marginLeft  = 64
	marginRight = 16
	marginTop   = 12
	marginBot   = 36
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"}

// Series is one line: points (X[i], Y[i]); a NaN Y breaks the line.
type Series struct {
	Name string
	X, Y []float64
	// Color overrides the palette, so that "served" can be green and "refused" red.
	Color string
}

func (s Series) color(i int) string {
	if s.Color != "" {
		return s.Color
	}
	return palette[i%len(palette)]
}

// LineChart is a time chart in seconds since the run began.
type LineChart struct {
	Title  string
	YLabel string
	Series []Series
	// XMax is the right edge. Shaded spans are greyed: the warmup and the drain, which the
	// summary leaves out or only partly covers.
	XMax   float64
	Shaded [][2]float64
	// Empty is shown instead of the plot when there is no point at all.
	Empty string
}

// BarChart is a grouped bar chart over named categories.
type BarChart struct {
	Title, XLabel, YLabel string
	Categories            []string
	Series                []Series // Y only, one value per category
	Empty                 string
}

// HTML renders the chart as a <figure> with an inline SVG and a legend.
func (c LineChart) HTML() string {
	var b strings.Builder
	openFigure(&b, c.Title)
	ymax := 0.0
	points := 0
	for _, s := range c.Series {
		for _, y := range s.Y {
			if !math.IsNaN(y) {
				ymax = math.Max(ymax, y)
				points++
			}
		}
	}
	if points == 0 {
		closeEmpty(&b, c.Empty)
		return b.String()
	}
	yTop, yStep := niceScale(ymax)
	xTop := math.Max(c.XMax, 1)
	_, xStep := niceScale(xTop)
	px := func(x float64) float64 { return marginLeft + x/xTop*(chartW-marginLeft-marginRight) }
	py := func(y float64) float64 { return chartH - marginBot - y/yTop*(chartH-marginTop-marginBot) }
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" width="%d" height="%d" role="img">`, chartW, chartH, chartW, chartH)
	for _, span := range c.Shaded {
		from, to := math.Max(span[0], 0), math.Min(span[1], xTop)
		if to > from {
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#eee"/>`,
				px(from), marginTop, px(to)-px(from), chartH-marginTop-marginBot)
		}
	}
	axes(&b, yTop, yStep, py, xTop, xStep, px, c.YLabel, "seconds since start")
	for i, s := range c.Series {
		color := s.color(i)
		var path strings.Builder
		pen := false
		for j := range s.Y {
			if math.IsNaN(s.Y[j]) {
				pen = false
				continue
			}
			cmd := 'L'
			if !pen {
				cmd = 'M'
			}
			fmt.Fprintf(&path, "%c%.1f %.1f", cmd, px(s.X[j]), py(s.Y[j]))
			pen = true
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.5"><title>%s</title></path>`,
			path.String(), color, html.EscapeString(s.Name))
		// A lone point between gaps would be invisible as a path.
		for j := range s.Y {
			lone := !math.IsNaN(s.Y[j]) && (j == 0 || math.IsNaN(s.Y[j-1])) && (j == len(s.Y)-1 || math.IsNaN(s.Y[j+1]))
			if lone {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2" fill="%s"/>`, px(s.X[j]), py(s.Y[j]), color)
			}
		}
	}
	b.WriteString(`</svg>`)
	legend(&b, c.Series)
	b.WriteString(`</figure>`)
	return b.String()
}

// HTML renders the bar chart as a <figure>.
func (c BarChart) HTML() string {
	var b strings.Builder
	openFigure(&b, c.Title)
	ymax := 0.0
	for _, s := range c.Series {
		for _, y := range s.Y {
			ymax = math.Max(ymax, y)
		}
	}
	if len(c.Categories) == 0 || ymax == 0 {
		closeEmpty(&b, c.Empty)
		return b.String()
	}
	yTop, yStep := niceScale(ymax)
	plotW := float64(chartW - marginLeft - marginRight)
	slot := plotW / float64(len(c.Categories))
	barW := slot * 0.8 / float64(len(c.Series))
	py := func(y float64) float64 { return chartH - marginBot - y/yTop*(chartH-marginTop-marginBot) }
	fmt.Fprintf(&b, `<svg viewBox="0 0 %d %d" width="%d" height="%d" role="img">`, chartW, chartH, chartW, chartH)
	axes(&b, yTop, yStep, py, 0, 0, nil, c.YLabel, c.XLabel)
	labelEvery := int(math.Ceil(float64(len(c.Categories)) / 30))
	for i, cat := range c.Categories {
		x0 := marginLeft + float64(i)*slot + slot*0.1
		for k, s := range c.Series {
			v := s.Y[i]
			if v <= 0 {
				continue
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %g</title></rect>`,
				x0+float64(k)*barW, py(v), barW, py(0)-py(v), s.color(k),
				html.EscapeString(s.Name), html.EscapeString(cat), v)
		}
		if i%labelEvery == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>`,
				marginLeft+(float64(i)+0.5)*slot, chartH-marginBot+14, html.EscapeString(cat))
		}
	}
	b.WriteString(`</svg>`)
	legend(&b, c.Series)
	b.WriteString(`</figure>`)
	return b.String()
}

func openFigure(b *strings.Builder, title string) {
	fmt.Fprintf(b, `<figure><figcaption>%s</figcaption>`, html.EscapeString(title))
}

func closeEmpty(b *strings.Builder, msg string) {
	if msg == "" {
		msg = "no data"
	}
	fmt.Fprintf(b, `<p class="empty">%s</p></figure>`, html.EscapeString(msg))
}

// axes draws the y grid with labels and, when px is set, the x ticks.
func axes(b *strings.Builder, yTop, yStep float64, py func(float64) float64, xTop, xStep float64, px func(float64) float64, yLabel, xLabel string) {
	for y := 0.0; y <= yTop*1.0001; y += yStep {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`, marginLeft, chartW-marginRight, py(y), py(y))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>`, marginLeft-4, py(y)+3, formatTick(y))
	}
	if px != nil {
		for x := 0.0; x <= xTop*1.0001; x += xStep {
			fmt.Fprintf(b, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>`, px(x), chartH-marginBot+14, formatTick(x))
		}
	}
	fmt.Fprintf(b, `<text x="12" y="%d" font-size="11" transform="rotate(-90 12 %d)" text-anchor="middle">%s</text>`,
		chartH/2, chartH/2, html.EscapeString(yLabel))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="11" text-anchor="middle">%s</text>`,
		(chartW+marginLeft)/2, chartH-6, html.EscapeString(xLabel))
}

func legend(b *strings.Builder, series []Series) {
	b.WriteString(`<ul class="legend">`)
	for i, s := range series {
		fmt.Fprintf(b, `<li><span style="background:%s"></span>%s</li>`, s.color(i), html.EscapeString(s.Name))
	}
	b.WriteString(`</ul>`)
}

// niceScale returns an axis top at or above v and a step of 1, 2 or 5 times a power of ten
// that divides it into at most five intervals.
func niceScale(v float64) (top, step float64) {
	if !(v > 0) {
		return 1, 0.2
	}
	raw := v / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * mag
		if step >= raw {
			break
		}
	}
	return math.Ceil(v/step) * step, step
}

func formatTick(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
