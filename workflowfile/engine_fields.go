package workflowfile

// fileField is the file's name for a field that the engine's plan check
// names in Go's terms (weir.Webhook.MaxAttempts, Plan.DeadlineIn,
// TaskSpec.SignalTimeout), so that an error names a field the file has.
func fileField(engineField string) string {
	switch engineField {
	case "webhook.max_attempts":
		return "webhook.attempts"
	case "deadline_in":
		return "deadline"
	case "signal_timeout":
		return "timeout"
	}
	return engineField
}
