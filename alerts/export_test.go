package alerts

// For the tests of package alerts_test, which may import packages that
// import alerts (diagnose reads the rules' limits).
var (
	AlertRules   = alertRules
	LabelSources = labelSources
	OutputLabels = outputLabels
)
