package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// The body of PUT /v1/schedules/{name} is read as strictly as the other
// bodies (spec/rest.md): encoding/json alone matches keys case-blindly,
// takes a key twice (the last wins), a null as "left out" and ignores
// what follows the object. checkScheduleBody refuses those before the
// body is decoded; the workflow inside is left to workflowfile.Parse,
// which reads it strictly itself, and a job's payload may be any value.

// scheduleKeys and scheduleJobKeys are the keys of a schedule body and of
// its job, exactly as spelled.
var (
	scheduleKeys    = []string{"cron", "tz", "every", "missed", "overlap", "job", "workflow"}
	scheduleJobKeys = []string{"queue", "payload", "priority", "max_attempts"}
)

// scheduleBodyError is a problem of a body at field (its path, "" for the body).
type scheduleBodyError struct {
	field, msg string
}

func (e *scheduleBodyError) Error() string { return e.msg }

// checkScheduleBody returns a *scheduleBodyError when body is not one JSON object
// whose keys are scheduleKeys (job's scheduleJobKeys), each at most once
// and none null, and nothing but white space after it.
func checkScheduleBody(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := checkObject(dec, "", scheduleKeys, func(key string) error {
		switch key {
		case "job":
			return checkObject(dec, "job", scheduleJobKeys, func(key string) error {
				if key == "payload" {
					return skipValue(dec)
				}
				return checkScalar(dec, "job."+key)
			})
		case "workflow":
			// read strictly by workflowfile.Parse; a null is no file
			return checkScalar(dec, key)
		}
		return checkScalar(dec, key)
	})
	if err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &scheduleBodyError{msg: "the body holds more than one JSON object: nothing may follow the schedule"}
	}
	return nil
}

// checkObject reads an object at field (its path; "" the body) whose keys
// are among keys, each once, reading each value with value.
func checkObject(dec *json.Decoder, field string, keys []string, value func(key string) error) error {
	tok, err := dec.Token()
	if err != nil {
		return &scheduleBodyError{msg: "the body is not JSON: " + err.Error()}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		what := "the body"
		if field != "" {
			what = field
		}
		if tok == nil {
			return &scheduleBodyError{field: field, msg: what + " is null: leave it out instead"}
		}
		return &scheduleBodyError{field: field, msg: what + " must be a JSON object"}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &scheduleBodyError{msg: "the body is not JSON: " + err.Error()}
		}
		key := tok.(string) // inside an object, a token before a value is its key
		path := key
		if field != "" {
			path = field + "." + key
		}
		if !slices.Contains(keys, key) {
			return &scheduleBodyError{field: path, msg: fmt.Sprintf("unknown field %q (keys are spelled exactly: %v)", key, keys)}
		}
		if seen[key] {
			return &scheduleBodyError{field: path, msg: fmt.Sprintf("%s is given twice", path)}
		}
		seen[key] = true
		if err := value(key); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return &scheduleBodyError{msg: "the body is not JSON: " + err.Error()}
	}
	return nil
}

// checkScalar reads a value at field that is not null (its type and
// contents are left to the decoding after).
func checkScalar(dec *json.Decoder, field string) error {
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return &scheduleBodyError{msg: "the body is not JSON: " + err.Error()}
	}
	if string(v) == "null" {
		return &scheduleBodyError{field: field, msg: field + " is null: leave it out instead"}
	}
	return nil
}

// skipValue reads any one value.
func skipValue(dec *json.Decoder) error {
	var v json.RawMessage
	if err := dec.Decode(&v); err != nil {
		return &scheduleBodyError{msg: "the body is not JSON: " + err.Error()}
	}
	return nil
}
