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
