// Command dockerfile-check lints Dockerfiles with BuildKit's own build
// checks, the rules `docker build --check` applies, without a Docker engine
// (none runs where this project is built and tested).
package main

import (
	"fmt"
	"os"

	"github.com/moby/buildkit/frontend/dockerfile/instructions"
	"github.com/moby/buildkit/frontend/dockerfile/linter"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dockerfile-check DOCKERFILE...")
		os.Exit(2)
	}
	problems := 0
	for _, path := range os.Args[1:] {
		n, err := check(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
		problems += n
	}
	if problems > 0 {
		os.Exit(1)
	}
}

// check prints every warning for one file and returns how many it found.
func check(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		return 0, err
	}
	problems := 0
	for _, w := range res.Warnings {
		fmt.Printf("%s:%d: %s\n", path, line(w.Location), w.Short)
		problems++
	}
	lint := linter.New(&linter.Config{
		ExperimentalAll: true,
		Warn: func(rule, _, url, msg string, location []parser.Range) {
			var at *parser.Range
			if len(location) > 0 {
				at = &location[0]
			}
			fmt.Printf("%s:%d: %s: %s (%s)\n", path, line(at), rule, msg, url)
			problems++
		},
	})
	if _, _, err := instructions.Parse(res.AST, lint); err != nil {
		return problems, err
	}
	return problems, nil
}

func line(r *parser.Range) int {
	if r == nil {
		return 0
	}
	return r.Start.Line
}
