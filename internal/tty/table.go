package tty

import (
	"io"
	"math"
	"slices"
	"strings"
)

// Column is a column of a Table and how it gives way on a narrow terminal.
type Column struct {
	Head string
	// Short is the short form of a cell (the run id's random part, a date
	// without its year); nil: none. A table too wide for its terminal
	// takes the short forms first.
	Short func(cell string) string
	// Drop is when the column is left out of a table too wide, short forms
	// taken: 1 first, then 2, …; 0: never.
	Drop int
	// Flex: the column (one at most, a title) takes the width that is
	// left, its cells cut with "…" down to Min cells; off a terminal, to
	// Max cells (0: whole).
	Flex     bool
	Min, Max int
	// Status: its cells are status words, coloured (Palette.Status).
	Status bool
}

// Table is rows of cells under columns, separated by two spaces, each
// column as wide as its widest cell, the last one not padded: as
// text/tabwriter lays them out (padding 2), widths in cells. Its cells hold
// no tab, no newline and no escape code (made safe: termsafe.Line).
type Table struct {
	Columns []Column
	Rows    [][]string
}

const gap = 2

// Write writes the table on w laid out for t: off a terminal every column
// whole (a Flex one cut to its Max); on one, fitted to t.Width (Fit), its
// status words coloured.
func (tb Table) Write(w io.Writer, t Terminal) error {
	var b strings.Builder
	cols, rows := tb.fit(t.Width)
	widths := make([]int, len(cols))
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], Cells(c))
		}
	}
	for r, row := range rows {
		for i, c := range row {
			cell := c
			if r > 0 && cols[i] >= 0 && tb.Columns[cols[i]].Status {
				cell = t.Palette.Status(c)
			}
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-Cells(c)+gap))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fit returns which columns are shown (their indexes) and the rows, head
// first, as shown at width (≤ 0: no terminal). A table wider than width
// takes its short forms, then leaves out columns in their Drop order
// until it fits with its Flex column at Min; the Flex column then takes
// what is left. A table that does not fit even so has its rows cut.
func (tb Table) fit(width int) (cols []int, rows [][]string) {
	all := make([]int, len(tb.Columns))
	for i := range all {
		all[i] = i
	}
	if width <= 0 {
		return all, tb.rows(all, false, -1)
	}
	flex := slices.IndexFunc(tb.Columns, func(c Column) bool { return c.Flex })
	// The full table, short forms, then fewer columns.
	tries := [][]int{all, all}
	order := slices.Clone(all)
	slices.SortStableFunc(order, func(a, b int) int { return tb.Columns[a].Drop - tb.Columns[b].Drop })
	cur := all
	for _, i := range order {
		if tb.Columns[i].Drop == 0 {
			continue
		}
		cur = slices.DeleteFunc(slices.Clone(cur), func(c int) bool { return c == i })
		tries = append(tries, cur)
	}
	for n, cols := range tries {
		short := n > 0
		whole := tb.rows(cols, short, math.MaxInt)
		if tb.width(whole, cols, flex, -1) <= width {
			return cols, whole
		}
		if !slices.Contains(cols, flex) {
			continue
		}
		// Whole ids and dates only while the Flex column keeps its Max.
		least := tb.Columns[flex].Min
		if !short {
			least = max(least, tb.Columns[flex].Max)
		}
		if w := tb.width(whole, cols, flex, least); w <= width {
			return cols, tb.rows(cols, short, least+width-w)
		}
	}
	// Each line cut: never wrapped.
	cols = tries[len(tries)-1]
	flexWidth := -1
	if flex >= 0 {
		flexWidth = tb.Columns[flex].Min
	}
	out := tb.lay(tb.rows(cols, true, flexWidth))
	rows = make([][]string, len(out))
	for i, line := range out {
		rows[i] = []string{Fit(line, width)}
	}
	return []int{-1}, rows
}

// rows are the head and rows of columns cols, short forms taken when
// short, the Flex column's cells cut to flexWidth cells (< 0: to its Max,
// when it has one).
func (tb Table) rows(cols []int, short bool, flexWidth int) [][]string {
	out := make([][]string, 0, len(tb.Rows)+1)
	head := make([]string, len(cols))
	for i, c := range cols {
		head[i] = tb.Columns[c].Head
	}
	out = append(out, head)
	for _, r := range tb.Rows {
		row := make([]string, len(cols))
		for i, c := range cols {
			col := tb.Columns[c]
			cell := r[c]
			if short && col.Short != nil {
				cell = col.Short(cell)
			}
			switch {
			case col.Flex && flexWidth >= 0:
				cell = Fit(cell, flexWidth)
			case col.Flex && col.Max > 0:
				cell = Fit(cell, col.Max)
			}
			row[i] = cell
		}
		out = append(out, row)
	}
	return out
}

// width is the widest line of rows laid out, the Flex column (the index
// flex of the table's) counted as flexWidth cells when ≥ 0.
func (tb Table) width(rows [][]string, cols []int, flex, flexWidth int) int {
	w := 0
	for i, c := range cols {
		cw := 0
		for _, row := range rows {
			cw = max(cw, Cells(row[i]))
		}
		if c == flex && flexWidth >= 0 {
			cw = min(cw, flexWidth)
		}
		w += cw
		if i < len(cols)-1 {
			w += gap
		}
	}
	return w
}

// lay is rows laid out, one string a row.
func (tb Table) lay(rows [][]string) []string {
	widths := map[int]int{}
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], Cells(c))
		}
	}
	out := make([]string, len(rows))
	for r, row := range rows {
		var b strings.Builder
		for i, c := range row {
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-Cells(c)+gap))
			}
		}
		out[r] = b.String()
	}
	return out
}
