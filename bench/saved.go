package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadReport reads a report saved from `weir bench --json`.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read saved report: %w", err)
	}
	rep, err := DecodeReport(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}

// DecodeReport decodes one report of `weir bench --json`. Fields it does
// not know are allowed (a harness may add its own, and later versions
// theirs); a JSON value that is not a report is an error.
func DecodeReport(b []byte) (*Report, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("not JSON: the file is empty")
		}
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value: give one report of `weir bench --json` per file")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a weir bench report: a JSON %s, not an object", jsonKind(v))
	}
	if _, ok := obj["server"].(string); !ok {
		return nil, errors.New(`not a weir bench report: no "server"`)
	}
	switch sc, ok := obj["scenarios"]; sc.(type) {
	case []any:
	case nil: // a run with no rows
		if !ok {
			return nil, errors.New(`not a weir bench report: no "scenarios"`)
		}
	default:
		return nil, errors.New(`not a weir bench report: "scenarios" is not a list`)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("not a weir bench report: %w", err)
	}
	for i, s := range rep.Scenarios {
		if s.Name == "" {
			return nil, fmt.Errorf("not a weir bench report: scenario %d has no name", i)
		}
	}
	return &rep, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "value"
}
