//go:build race

// Package race says whether the binary was built with -race, which makes
// reading and allocating several times slower: the tests that measure the
// memory of one goroutine's load skip then, as they find no race.
package race

// Enabled is true under -race.
const Enabled = true
