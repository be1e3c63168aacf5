package testsupport

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// DurableStop is how the first instance of a durable test ended, which
// decides what the resumed instance's job history may show.
type DurableStop int

const (
	// StoppedCleanly: every pod got SIGTERM and rank 0 stopped within its
	// grace period, ending each running job with the note that says it
	// was lost to the stop, and saving its state.
	StoppedCleanly DurableStop = iota
	// RankLost: a rank's pod went first, then the whole instance was
	// restarted: the jobs the lost rank ran end with Flux's own notes.
	RankLost
	// KilledWithoutStop: rank 0 was killed before it could stop. The next
	// instance resumes the last checkpoint and fails each job it cannot
	// reattach to ("failed to create guest ns"); a step that ended less
	// than a checkpoint period before the kill may be missing from the
	// history altogether, and run again.
	KilledWithoutStop
)

// lostToStop is in the note of each job rank 0 ended as it stopped.
const lostToStop = "lost: the instance stopped"

// lostUnreattached is in the note of each job a resumed instance failed
// because the earlier instance was killed while it ran.
const lostUnreattached = "failed to create guest ns"

// historyLine is one job of the history the durable launcher prints as
// its last act: "job NAME RESULT NOTE".
var historyLine = regexp.MustCompile(`(?m)^job (step-\d+) (\S+) ?(.*)$`)

// DurableResume is what CheckDurableResume found.
type DurableResume struct {
	// Problems are the broken promises, one sentence each.
	Problems []string
	// Lost are the history's jobs that did not succeed, as printed.
	Lost []string
	// RanAgain are the steps whose work ran to its end more than once,
	// which the stop allowed.
	RanAgain []string
}

// CheckDurableResume checks a durable launcher's steps step-1..step-N
// after its instance was stopped and a new one resumed the state. log is
// the resumed rank 0's log, where the launcher says whether it was
// restored ("restored=1"), lists the job history ("job NAME RESULT
// NOTE") and counts the steps that succeeded ("N steps succeeded"); ran
// is the file each step appends its name to as its last act; doneBefore
// are the steps seen succeeded before the stop.
//
// The promise: each step succeeded exactly once in the history; a step
// that had succeeded before the stop never ran again; every other job
// ended as lost, with a note that says why. A step's work may run to its
// end twice only when the history shows one of its jobs lost: its last
// act was done, but the stop ended its job before Flux recorded that end
// (every at-least-once system has that window). After a kill, a step
// may also run again unrecorded, unless it had succeeded before the stop.
func CheckDurableResume(log string, ran []byte, steps int, doneBefore []string, stop DurableStop) DurableResume {
	var r DurableResume
	problem := func(format string, args ...any) { r.Problems = append(r.Problems, fmt.Sprintf(format, args...)) }
	if !strings.Contains(log, "restored=1\n") {
		problem("the resumed launcher did not see JOBSET_FLUX_RESTORED=1")
	}
	if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d steps succeeded$`, steps)).MatchString(log) {
		problem("the launcher did not count %d steps succeeded", steps)
	}
	results := map[string][]string{}
	lost := map[string]bool{}
	for _, m := range historyLine.FindAllStringSubmatch(log, -1) {
		name, result, note := m[1], m[2], m[3]
		results[name] = append(results[name], result)
		if result == "COMPLETED" {
			continue
		}
		lost[name] = true
		r.Lost = append(r.Lost, m[0])
		switch {
		case strings.Contains(note, lostToStop):
		case stop == KilledWithoutStop && strings.Contains(note, lostUnreattached):
		case stop == RankLost:
		default:
			problem("%s ended %s with the note %q, not one that says it was lost to the stop", name, result, note)
		}
	}
	runs := strings.Fields(string(ran))
	for i := 1; i <= steps; i++ {
		name := fmt.Sprintf("step-%d", i)
		if n := count(results[name], "COMPLETED"); n != 1 {
			problem("%s: results %v, want exactly one COMPLETED", name, results[name])
		}
		before := slices.Contains(doneBefore, name)
		if before && len(results[name]) != 1 {
			problem("%s succeeded before the stop, but the resumed instance ran it again: %v", name, results[name])
		}
		switch n := count(runs, name); {
		case n == 0:
			problem("%s never ran to its end", name)
		case n == 1:
		case before:
			problem("%s succeeded before the stop, but ran to its end %d times", name, n)
		case lost[name] || stop == KilledWithoutStop:
			r.RanAgain = append(r.RanAgain, name)
		default:
			problem("%s ran to its end %d times, but no job of it was lost", name, n)
		}
	}
	return r
}

// Report fails t with each problem and logs the lost jobs and the steps
// that ran again.
func (r DurableResume) Report(t testing.TB) {
	t.Helper()
	for _, p := range r.Problems {
		t.Error(p)
	}
	for _, l := range r.Lost {
		t.Logf("lost: %s", l)
	}
	if len(r.RanAgain) > 0 {
		t.Logf("steps whose work ran to its end again: %v", r.RanAgain)
	}
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}
