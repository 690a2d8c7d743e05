package engine

// TraceParentLen is the length of a W3C traceparent of version 00
// ("00-<32 hex trace ID>-<16 hex parent ID>-<2 hex flags>").
const TraceParentLen = 55

// ValidateTraceParent checks the trace context a submit or an enqueue
// stores with its workflow or job (SubmitParams.TraceParent,
// EnqueueParams.TraceParent): empty, or a W3C traceparent of TraceParentLen
// bytes, lowercase hex, whose trace and parent IDs are not all zeros and
// whose version is not ff. The stores keep it as given and hand it back
// with every claim of the workflow's jobs or of the job
// (Claimed.TraceParent); they never read it otherwise.
func ValidateTraceParent(tp string) error {
	if tp == "" {
		return nil
	}
	bad := func(why string) error {
		return invalid("", "traceparent", "traceparent %.80q %s; want a W3C traceparent such as 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tp, why)
	}
	if len(tp) != TraceParentLen {
		return bad("is not 55 bytes")
	}
	for i := 0; i < len(tp); i++ {
		c := tp[i]
		switch i {
		case 2, 35, 52:
			if c != '-' {
				return bad("has no '-' where one belongs")
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
				return bad("is not lowercase hex")
			}
		}
	}
	switch {
	case tp[:2] == "ff":
		return bad("has the invalid version ff")
	case tp[3:35] == "00000000000000000000000000000000":
		return bad("has an all-zero trace ID")
	case tp[36:52] == "0000000000000000":
		return bad("has an all-zero parent ID")
	}
	return nil
}
