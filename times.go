package weir

// TimeLayout is the layout of every time weir writes as text: in records
// and jobs (JSON), in events (JSON and `weir events`), in the REST API.
// RFC 3339 in UTC with exactly three fraction digits (the store keeps
// milliseconds), "2026-12-02T18:07:15.500Z", so that times of one length
// sort as strings in time order. Format t.UTC() with it; time.Time's
// UnmarshalJSON and time.Parse(time.RFC3339, …) read it back.
const TimeLayout = "2006-01-02T15:04:05.000Z"
