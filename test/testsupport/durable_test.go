package testsupport

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// history builds a resumed launcher's log over three steps: results maps a
// step to the "RESULT NOTE" of each of its jobs, in order.
func history(results map[string][]string, counted int) string {
	var b strings.Builder
	b.WriteString("restored=1\n")
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("step-%d", i)
		for _, r := range results[name] {
			fmt.Fprintf(&b, "job %s %s\n", name, r)
		}
	}
	fmt.Fprintf(&b, "%d steps succeeded\n", counted)
	return b.String()
}

func TestCheckDurableResume(t *testing.T) {
	const lostNote = "CANCELED jobset-flux: lost: the instance stopped (its pods were deleted) while the job ran"
	const guestNote = "FAILED failed to create guest ns"
	clean := map[string][]string{"step-1": {"COMPLETED"}, "step-2": {lostNote, "COMPLETED"}, "step-3": {"COMPLETED"}}
	for _, tc := range []struct {
		name       string
		log        string
		ran        string
		doneBefore []string
		stop       DurableStop
		problems   []string
		ranAgain   []string
	}{
		{
			name: "clean stop, each step once", log: history(clean, 3), ran: "step-1 step-3 step-2",
			doneBefore: []string{"step-1"}, stop: StoppedCleanly,
		},
		{
			// The step's last act was done when the stop's cancel reached
			// its job: lost in the history, its work ran twice.
			name: "clean stop, a lost step's work ended twice", log: history(clean, 3), ran: "step-1 step-2 step-3 step-2",
			doneBefore: []string{"step-1"}, stop: StoppedCleanly, ranAgain: []string{"step-2"},
		},
		{
			name: "a step ran twice with no job of it lost", log: history(clean, 3), ran: "step-1 step-2 step-3 step-3",
			stop:     StoppedCleanly,
			problems: []string{"step-3 ran to its end 2 times, but no job of it was lost"},
		},
		{
			name: "a step that succeeded before the stop ran again", log: history(clean, 3), ran: "step-1 step-2 step-3 step-1",
			doneBefore: []string{"step-1"}, stop: KilledWithoutStop,
			problems: []string{"step-1 succeeded before the stop, but ran to its end 2 times"},
		},
		{
			name: "a step that succeeded before the stop has a second job",
			log:  history(map[string][]string{"step-1": {"COMPLETED", "COMPLETED"}, "step-2": {"COMPLETED"}, "step-3": {"COMPLETED"}}, 3),
			ran:  "step-1 step-2 step-3", doneBefore: []string{"step-1"}, stop: StoppedCleanly,
			problems: []string{
				"step-1: results [COMPLETED COMPLETED], want exactly one COMPLETED",
				"step-1 succeeded before the stop, but the resumed instance ran it again: [COMPLETED COMPLETED]",
			},
		},
		{
			name: "a step never succeeded",
			log:  history(map[string][]string{"step-1": {"COMPLETED"}, "step-2": {lostNote}, "step-3": {"COMPLETED"}}, 2),
			ran:  "step-1 step-3", stop: StoppedCleanly,
			problems: []string{
				"the launcher did not count 3 steps succeeded",
				"step-2: results [CANCELED], want exactly one COMPLETED",
				"step-2 never ran to its end",
			},
		},
		{
			name: "a clean stop's lost job without the note",
			log:  history(map[string][]string{"step-1": {"COMPLETED"}, "step-2": {"CANCELED", "COMPLETED"}, "step-3": {"COMPLETED"}}, 3),
			ran:  "step-1 step-2 step-3", stop: StoppedCleanly,
			problems: []string{`step-2 ended CANCELED with the note "", not one that says it was lost to the stop`},
		},
		{
			name: "after a kill, a job the resumed instance could not reattach to",
			log:  history(map[string][]string{"step-1": {"COMPLETED"}, "step-2": {guestNote, "COMPLETED"}, "step-3": {"COMPLETED"}}, 3),
			ran:  "step-1 step-2 step-3 step-3", doneBefore: []string{"step-1"}, stop: KilledWithoutStop, ranAgain: []string{"step-3"},
		},
		{
			name: "that note is no clean stop's",
			log:  history(map[string][]string{"step-1": {"COMPLETED"}, "step-2": {guestNote, "COMPLETED"}, "step-3": {"COMPLETED"}}, 3),
			ran:  "step-1 step-2 step-3", stop: StoppedCleanly,
			problems: []string{`step-2 ended FAILED with the note "failed to create guest ns", not one that says it was lost to the stop`},
		},
		{
			name: "a lost rank's jobs end with Flux's own notes",
			log:  history(map[string][]string{"step-1": {"COMPLETED"}, "step-2": {"FAILED node-removed", "COMPLETED"}, "step-3": {"COMPLETED"}}, 3),
			ran:  "step-1 step-2 step-3 step-2", stop: RankLost, ranAgain: []string{"step-2"},
		},
		{
			name: "not restored",
			log:  strings.Replace(history(clean, 3), "restored=1", "restored=0", 1),
			ran:  "step-1 step-2 step-3", stop: StoppedCleanly,
			problems: []string{"the resumed launcher did not see JOBSET_FLUX_RESTORED=1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckDurableResume(tc.log, []byte(tc.ran), 3, tc.doneBefore, tc.stop)
			if !slices.Equal(got.Problems, tc.problems) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got.Problems, "\n"), strings.Join(tc.problems, "\n"))
			}
			if !slices.Equal(got.RanAgain, tc.ranAgain) {
				t.Errorf("ran again %v, want %v", got.RanAgain, tc.ranAgain)
			}
		})
	}
}
