//go:build race

package server

// raceDetector says the tests run under -race, which slows every request
// several times: the tests that measure capacity skip then.
const raceDetector = true
