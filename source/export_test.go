package source

// PeakHeap is peakHeap for the benchmarks of package source_test.
var PeakHeap = peakHeap
