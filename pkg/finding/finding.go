// Package finding holds what the function tells its user about one object:
// errors that stop a render, warnings about risky input, and infos about
// fields set on the user's behalf. Each names the field it is about, so the
// orchestrator (kpt, kustomize, Argo CD) can point at it.
package finding

import (
	"fmt"
	"strconv"
)

// Severity orders findings; only errors stop a render. Results spell it
// as kpt does (pkg/transform maps it to fn.Severity).
type Severity int

// Severities, from least to most serious.
const (
	Info Severity = iota
	Warning
	Error
)

// Finding is one message about one field of one object.
type Finding struct {
	Severity Severity
	// Path is the field path, e.g. spec.replicatedJobs[1].replicas ("" for the whole object).
	Path string
	// Current and Proposed are the field's value now and the value that fixes it, when known.
	Current, Proposed string
	// Message says what is wrong or what was done, and what to change.
	Message string
}

// List collects findings in the order they were found.
type List []Finding

// Errorf records an error about path.
func (l *List) Errorf(path, format string, args ...any) {
	*l = append(*l, Finding{Severity: Error, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Warnf records a warning about path.
func (l *List) Warnf(path, format string, args ...any) {
	*l = append(*l, Finding{Severity: Warning, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Infof records an info about path.
func (l *List) Infof(path, format string, args ...any) {
	*l = append(*l, Finding{Severity: Info, Path: path, Message: fmt.Sprintf(format, args...)})
}

// Add appends findings from another list.
func (l *List) Add(other List) { *l = append(*l, other...) }

// HasErrors reports whether any finding is an error.
func (l List) HasErrors() bool {
	for _, f := range l {
		if f.Severity == Error {
			return true
		}
	}
	return false
}

// quoteLimit bounds how much of a user's value a message repeats: enough
// to recognise it, never a whole pasted script.
const quoteLimit = 80

// Quote writes a user's value for a message: Go-quoted, so control
// characters and invisible spaces show, and cut after quoteLimit bytes.
func Quote(value string) string {
	if len(value) > quoteLimit {
		value = value[:quoteLimit] + "..."
	}
	return strconv.Quote(value)
}
