package docs

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Table reads the rows of the markdown table whose header row has exactly
// the cells header, up to the first line that is not a row. Each row is its
// cells, trimmed; a row with another number of cells is an error, so a
// column cannot go missing unnoticed.
func Table(r io.Reader, header ...string) ([][]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	var rows [][]string
	in := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		cells, isRow := tableCells(line)
		switch {
		case !in && isRow && slices.Equal(cells, header):
			in = true
			sc.Scan() // the |---| delimiter row
		case in && !isRow:
			return rows, nil
		case in && len(cells) != len(header):
			return nil, fmt.Errorf("table %q: row %.60q has %d cells, want %d", strings.Join(header, " | "), line, len(cells), len(header))
		case in:
			rows = append(rows, cells)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !in {
		return nil, fmt.Errorf("no table with the header | %s |", strings.Join(header, " | "))
	}
	return rows, nil
}

// tableCells splits a table row into its trimmed cells; a cell's
// backslash-escaped pipes stay in it.
func tableCells(line string) ([]string, bool) {
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil, false
	}
	var cells []string
	var cell strings.Builder
	body := line[1 : len(line)-1]
	for i := 0; i < len(body); i++ {
		switch {
		case body[i] == '\\' && i+1 < len(body) && body[i+1] == '|':
			cell.WriteByte('|')
			i++
		case body[i] == '|':
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
		default:
			cell.WriteByte(body[i])
		}
	}
	return append(cells, strings.TrimSpace(cell.String())), true
}

// ReplaceTable returns doc with the rows of the table whose header row has
// exactly the cells header replaced by rows, for a table whose columns are
// generated; a cell's pipe is escaped, an empty cell is written "| |".
func ReplaceTable(doc string, rows [][]string, header ...string) (string, error) {
	lines := strings.SplitAfter(doc, "\n")
	for i, line := range lines {
		cells, isRow := tableCells(strings.TrimSpace(line))
		if !isRow || !slices.Equal(cells, header) || i+1 >= len(lines) {
			continue
		}
		end := i + 2 // past the |---| delimiter row
		for end < len(lines) {
			if _, isRow := tableCells(strings.TrimSpace(lines[end])); !isRow {
				break
			}
			end++
		}
		var b strings.Builder
		for _, row := range rows {
			if len(row) != len(header) {
				return "", fmt.Errorf("table %q: row %q has %d cells, want %d", strings.Join(header, " | "), row, len(row), len(header))
			}
			b.WriteString("|")
			for _, c := range row {
				if c != "" {
					b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`))
				}
				b.WriteString(" |")
			}
			b.WriteString("\n")
		}
		return strings.Join(lines[:i+2], "") + b.String() + strings.Join(lines[end:], ""), nil
	}
	return "", fmt.Errorf("no table with the header | %s |", strings.Join(header, " | "))
}

// Keyed orders the keys of a generated table: those old lists (the first
// cells of its rows as written) in that order, each other key of keys
// right after the key before it in keys, so a row added to the source
// lands next to its neighbour and the rest of the table does not move.
func Keyed(old [][]string, keys []string) []string {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var out []string
	for _, row := range old {
		if want[row[0]] && !slices.Contains(out, row[0]) {
			out = append(out, row[0])
		}
	}
	for i, k := range keys {
		if slices.Contains(out, k) {
			continue
		}
		at := 0
		if i > 0 {
			at = slices.Index(out, keys[i-1]) + 1
		}
		out = slices.Insert(out, at, k)
	}
	return out
}
