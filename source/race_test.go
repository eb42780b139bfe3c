//go:build race

package source

// raceDetector says the tests run under -race, which makes reading and
// allocating several times slower: the tests that measure the memory of
// one goroutine's load skip then, as they find no race.
const raceDetector = true
