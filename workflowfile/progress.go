package workflowfile

import "github.com/weirflow/weir"

// ProgressRecord is a job's or task's last progress report in the records
// (spec/workflow-file.md): its percent, message and the store's time of
// the report.
type ProgressRecord struct {
	Percent float64 `json:"percent"`
	Message string  `json:"message"`
	At      *Stamp  `json:"at"`
}

// NewProgressRecord returns p's record, nil (JSON null) for no progress.
func NewProgressRecord(p *weir.Progress) *ProgressRecord {
	if p == nil {
		return nil
	}
	return &ProgressRecord{Percent: p.Percent, Message: p.Message, At: optTime(p.At)}
}
