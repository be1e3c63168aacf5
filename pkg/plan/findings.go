package plan

import (
	"fmt"

	"github.com/jobset-flux/jobset-flux/pkg/finding"
)

// add appends a finding with the value in force and the one to set.
func add(found *finding.List, sev finding.Severity, path, current, proposed, format string, args ...any) {
	*found = append(*found, finding.Finding{Severity: sev, Path: path, Current: current, Proposed: proposed,
		Message: path + " " + fmt.Sprintf(format, args...)})
}
