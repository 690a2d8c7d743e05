package engine

import (
	"strings"
	"time"
)

// The rules a schedule's timing must meet beyond what the cron parser
// takes (spec/states.md, Schedules): the parser would read each of these
// into something other than what it says.

// checkTimingRules refuses, at a put, a timing that the cron parser takes
// but weir does not: a zone of "Local" (each worker's own zone, so that
// workers in other zones would tick at other times), and an "@every"
// interval that is not whole seconds of at least one (the parser rounds
// it up to a second, as `every` refuses to). A schedule stored before
// these rules still fires as it was stored.
func checkTimingRules(s ScheduleSpec) error {
	if s.TZ == localZone {
		return invalid("", "tz", "%q is each worker's own zone, not one zone: give an IANA zone (Europe/Paris), or none for UTC", s.TZ)
	}
	expr := s.Cron
	if zone, rest, ok := cronZone(expr); ok {
		if zone == localZone {
			return invalid("", "cron", "%q: %s is each worker's own zone, not one zone: give an IANA zone (CRON_TZ=Europe/Paris), or none for UTC", s.Cron, localZone)
		}
		expr = rest
	}
	if arg, ok := strings.CutPrefix(expr, "@every "); ok {
		d, err := time.ParseDuration(arg)
		if err == nil && (d < time.Second || d%time.Second != 0) {
			return invalid("", "cron", "%q: the interval of @every must be whole seconds, at least 1s (as every's)", s.Cron)
		}
	}
	return nil
}

// localZone is the zone name time.LoadLocation reads as the process's own.
const localZone = "Local"

// cronZone splits a cron expression that starts with a zone,
// "CRON_TZ=Zone expr" or "TZ=Zone expr", into the zone and the rest; ok
// is false when it starts with neither.
func cronZone(expr string) (zone, rest string, ok bool) {
	for _, p := range []string{"CRON_TZ=", "TZ="} {
		if after, found := strings.CutPrefix(expr, p); found {
			zone, rest, _ = strings.Cut(after, " ")
			return zone, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}
