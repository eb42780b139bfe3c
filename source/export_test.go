package source

// PeakHeap is peakHeap for the benchmarks of package source_test.
var PeakHeap = peakHeap

// RaceDetector is raceDetector for the tests of package source_test.
const RaceDetector = raceDetector
