package hostlist

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// appendJobSet adds one replicatedJob the way the renderer does: whole
// ranges, one expression per job index unless every job has one pod.
func appendJobSet(l *List, jobset, rj string, replicas, completions int) {
	if completions == 1 {
		l.AppendRange(fmt.Sprintf("%s-%s-", jobset, rj), 0, replicas-1, "-0")
		return
	}
	for j := 0; j < replicas; j++ {
		l.AppendRange(fmt.Sprintf("%s-%s-%d-", jobset, rj, j), 0, completions-1, "")
	}
}

// naiveJobSet lists the pod hostnames one by one in rank order.
func naiveJobSet(jobset, rj string, replicas, completions int) []string {
	var hosts []string
	for j := 0; j < replicas; j++ {
		for p := 0; p < completions; p++ {
			hosts = append(hosts, fmt.Sprintf("%s-%s-%d-%d", jobset, rj, j, p))
		}
	}
	return hosts
}

// splitExprs splits at commas outside brackets, independently of the
// parser under test.
func splitExprs(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func checkOneBracket(t *testing.T, s string) {
	t.Helper()
	for _, e := range splitExprs(s) {
		if strings.Count(e, "[") > 1 {
			t.Errorf("expression %q of %q has more than one bracket group", e, s)
		}
	}
}

func TestExpandVectors(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"foo", []string{"foo"}},
		{"foo[1-3]", []string{"foo1", "foo2", "foo3"}},
		{"foo[1,3-5]bar", []string{"foo1bar", "foo3bar", "foo4bar", "foo5bar"}},
		{"foo[00-02]", []string{"foo00", "foo01", "foo02"}},
		{"foo[08-10]", []string{"foo08", "foo09", "foo10"}},
		{"foo[098-100]", []string{"foo098", "foo099", "foo100"}},
		{"foo[0-2,007]", []string{"foo0", "foo1", "foo2", "foo007"}},
		{"foo[1-010]", []string{"foo1", "foo2", "foo3", "foo4", "foo5", "foo6", "foo7", "foo8", "foo9", "foo10"}},
		{"a,b[1-2],c", []string{"a", "b1", "b2", "c"}},
		{"[3-4]", []string{"3", "4"}},
		{"x[5]", []string{"x5"}},
		{"x[3,1,2]", []string{"x3", "x1", "x2"}},
		{"x[1-2,1-2]", []string{"x1", "x2", "x1", "x2"}},
		{"js-w-[0-2]-0", []string{"js-w-0-0", "js-w-1-0", "js-w-2-0"}},
		{"node-1.example.org", []string{"node-1.example.org"}},
	} {
		got, err := Expand(tc.in, 0)
		if err != nil {
			t.Errorf("Expand(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct {
		in      string
		limit   int
		is      error
		message string
	}{
		{"foo[1-3", 0, ErrSyntax, "position 3: '[' is never closed"},
		{"foo1-3]", 0, ErrSyntax, "position 6: ']' without '['"},
		{"foo[1-[2]]", 0, ErrSyntax, "position 6: nested '['"},
		{"foo[]", 0, ErrSyntax, "position 3: empty brackets"},
		{"foo[1,]", 0, ErrSyntax, "position 6: empty id"},
		{"foo[,1]", 0, ErrSyntax, "position 4: empty id"},
		{"foo[3-1]", 0, ErrSyntax, `range "3-1" ends below its start`},
		{"foo[1-]", 0, ErrSyntax, "position 6: missing id"},
		{"foo[-1]", 0, ErrSyntax, "position 4: missing id"},
		{"foo[a]", 0, ErrSyntax, `id "a" is not a decimal number`},
		{"foo[+1]", 0, ErrSyntax, `id "+1" is not a decimal number`},
		{"foo[1-2-3]", 0, ErrSyntax, `id "2-3" is not a decimal number`},
		{"foo[99999999999999999999]", 0, ErrSyntax, "value out of range"},
		{"js-w-[0-1]-[0-3]", 0, ErrSyntax, "position 11: second bracket group"},
		{"a,,b", 0, ErrSyntax, "position 2: empty hostname"},
		{",a", 0, ErrSyntax, "position 0: empty hostname"},
		{"a,", 0, ErrSyntax, "position 2: empty hostname"},
		{"a, b", 0, ErrSyntax, `position 2: invalid character " "`},
		{"a[1]\n", 0, ErrSyntax, `position 4: invalid character "\n"`},
		{"a\t[1]", 0, ErrSyntax, `position 1: invalid character "\t"`},
		{"foo[1-3]", 2, ErrLimit, "more than the limit of 2"},
		{"a,b,c", 2, ErrLimit, "more than the limit of 2"},
		{"foo[0-999999999999999]", 1000, ErrLimit, "more than the limit of 1000"},
		{"foo[0-9223372036854775807]", 0, ErrLimit, "overflows"},
		{"foo[0-9223372036854775806,1]", 0, ErrLimit, "overflows"},
		{"foo[0-9223372036854775806],b", 0, ErrLimit, "overflows"},
	} {
		got, err := Expand(tc.in, tc.limit)
		if !errors.Is(err, tc.is) {
			t.Errorf("Expand(%q, %d) = %q, %v; want error %v", tc.in, tc.limit, got, err, tc.is)
			continue
		}
		if got != nil {
			t.Errorf("Expand(%q, %d) returned hosts alongside an error", tc.in, tc.limit)
		}
		if !strings.Contains(err.Error(), tc.message) {
			t.Errorf("Expand(%q, %d) error %q does not contain %q", tc.in, tc.limit, err, tc.message)
		}
	}
}

func TestExpandLimitIsInclusive(t *testing.T) {
	got, err := Expand("foo[1-3],bar", 4)
	if err != nil {
		t.Fatalf("Expand at exactly the limit: %v", err)
	}
	if want := []string{"foo1", "foo2", "foo3", "bar"}; !slices.Equal(got, want) {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	if _, err := Expand("foo[1-3],bar", 3); !errors.Is(err, ErrLimit) {
		t.Errorf("Expand one over the limit: err = %v, want ErrLimit", err)
	}
	if got, err := Expand("foo[1-3],bar", -1); err != nil || len(got) != 4 {
		t.Errorf("Expand with negative limit = %q, %v; want 4 hosts", got, err)
	}
}

func TestZeroList(t *testing.T) {
	var l List
	if s := l.String(); s != "" {
		t.Errorf("empty String() = %q, want \"\"", s)
	}
	if n := l.Len(); n != 0 {
		t.Errorf("empty Len() = %d, want 0", n)
	}
}

func TestAppendRangeMerging(t *testing.T) {
	for _, tc := range []struct {
		name   string
		build  func(l *List)
		want   string
		length int
	}{
		{"single host", func(l *List) { l.AppendRange("js-w-0-", 0, 0, "") }, "js-w-0-0", 1},
		{"contiguous merge", func(l *List) {
			l.AppendRange("js-w-0-", 0, 3, "")
			l.AppendRange("js-w-0-", 4, 6, "")
		}, "js-w-0-[0-6]", 7},
		{"single hosts merge into a range", func(l *List) {
			for i := 0; i < 4; i++ {
				l.AppendRange("n", i, i, "")
			}
		}, "n[0-3]", 4},
		{"gap stays in the same bracket", func(l *List) {
			l.AppendRange("js-w-", 0, 3, "")
			l.AppendRange("js-w-", 7, 9, "")
			l.AppendRange("js-w-", 11, 11, "")
		}, "js-w-[0-3,7-9,11]", 8},
		{"descending keeps written order", func(l *List) {
			l.AppendRange("n", 5, 6, "")
			l.AppendRange("n", 0, 1, "")
		}, "n[5-6,0-1]", 4},
		{"different suffix starts a new expression", func(l *List) {
			l.AppendRange("js-w-", 0, 1, "-0")
			l.AppendRange("js-w-", 2, 3, "-1")
		}, "js-w-[0-1]-0,js-w-[2-3]-1", 4},
		{"different prefix starts a new expression", func(l *List) {
			l.AppendRange("a", 0, 0, "")
			l.AppendRange("b", 1, 1, "")
			l.AppendRange("a", 1, 1, "")
		}, "a0,b1,a1", 3},
		{"large ids", func(l *List) { l.AppendRange("n", 999999, 1000001, "") }, "n[999999-1000001]", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l List
			tc.build(&l)
			if got := l.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
			if got := l.Len(); got != tc.length {
				t.Errorf("Len() = %d, want %d", got, tc.length)
			}
			hosts, err := Expand(l.String(), 0)
			if err != nil {
				t.Fatalf("Expand(String()): %v", err)
			}
			if len(hosts) != tc.length {
				t.Errorf("Expand(String()) has %d hosts, Len() says %d", len(hosts), tc.length)
			}
		})
	}
}

func TestAppendRangePanics(t *testing.T) {
	for _, tc := range []struct {
		name           string
		prefix, suffix string
		lo, hi         int
	}{
		{"negative lo", "n", "", -1, 3},
		{"hi below lo", "n", "", 4, 3},
		{"bracket in prefix", "n[", "", 0, 1},
		{"bracket in suffix", "n", "]", 0, 1},
		{"comma in prefix", "a,n", "", 0, 1},
		{"comma in suffix", "n", ",b", 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l List
			defer func() {
				if recover() == nil {
					t.Errorf("AppendRange(%q, %d, %d, %q) did not panic", tc.prefix, tc.lo, tc.hi, tc.suffix)
				}
				if l.Len() != 0 || l.String() != "" {
					t.Errorf("list changed by a rejected AppendRange: %q", l.String())
				}
			}()
			l.AppendRange(tc.prefix, tc.lo, tc.hi, tc.suffix)
		})
	}
}

func TestJobSetShapes(t *testing.T) {
	known := map[[2]int]string{
		{1, 4}: "js-w-0-[0-3]",
		{4, 1}: "js-w-[0-3]-0",
		{2, 2}: "js-w-0-[0-1],js-w-1-[0-1]",
		{1, 1}: "js-w-0-0",
		{2, 1}: "js-w-[0-1]-0",
		{3, 5}: "js-w-0-[0-4],js-w-1-[0-4],js-w-2-[0-4]",
	}
	for _, names := range [][2]string{{"js", "w"}, {"js1", "w2"}} {
		for r := 1; r <= 5; r++ {
			for c := 1; c <= 5; c++ {
				var l List
				appendJobSet(&l, names[0], names[1], r, c)
				s := l.String()
				if want, ok := known[[2]int{r, c}]; ok && names[0] == "js" && s != want {
					t.Errorf("R=%d C=%d: String() = %q, want %q", r, c, s, want)
				}
				want := naiveJobSet(names[0], names[1], r, c)
				if l.Len() != len(want) {
					t.Errorf("%s R=%d C=%d: Len() = %d, want %d", names, r, c, l.Len(), len(want))
				}
				got, err := Expand(s, len(want))
				if err != nil {
					t.Errorf("%s R=%d C=%d: Expand(%q): %v", names, r, c, s, err)
					continue
				}
				if !slices.Equal(got, want) {
					t.Errorf("%s R=%d C=%d: Expand(%q) = %q, want %q", names, r, c, s, got, want)
				}
				checkOneBracket(t, s)
			}
		}
	}
}

func TestSeveralReplicatedJobs(t *testing.T) {
	type rjob struct {
		name      string
		r, c      int
		wantExprs string
	}
	jobs := []rjob{
		{"l2", 1, 1, "js1-l2-0-0"},
		{"w2", 3, 4, "js1-w2-0-[0-3],js1-w2-1-[0-3],js1-w2-2-[0-3]"},
		{"p", 5, 1, "js1-p-[0-4]-0"},
		{"q10", 1, 12, "js1-q10-0-[0-11]"},
	}
	var l List
	var want []string
	var wantText []string
	for _, j := range jobs {
		appendJobSet(&l, "js1", j.name, j.r, j.c)
		want = append(want, naiveJobSet("js1", j.name, j.r, j.c)...)
		wantText = append(wantText, j.wantExprs)
	}
	if got := l.String(); got != strings.Join(wantText, ",") {
		t.Errorf("String() = %q, want %q", got, strings.Join(wantText, ","))
	}
	if l.Len() != len(want) {
		t.Errorf("Len() = %d, want %d", l.Len(), len(want))
	}
	got, err := Expand(l.String(), 0)
	if err != nil {
		t.Fatalf("Expand: %v", err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Expand(String()) = %q, want %q", got, want)
	}
	checkOneBracket(t, l.String())
}

func TestAppendRangeMemoryIndependentOfHosts(t *testing.T) {
	// A million-pod replicatedJob with one pod per job is one range: the
	// allocations must be the same as for a two-host range.
	build := func(hi int, want string) float64 {
		return testing.AllocsPerRun(10, func() {
			var l List
			l.AppendRange("js-w-", 0, hi, "-0")
			if l.Len() != hi+1 {
				t.Fatalf("Len() = %d, want %d", l.Len(), hi+1)
			}
			if s := l.String(); s != want {
				t.Fatalf("String() = %q, want %q", s, want)
			}
		})
	}
	small := build(1, "js-w-[0-1]-0")
	large := build(999999, "js-w-[0-999999]-0")
	if large != small {
		t.Errorf("1,000,000-host range took %.0f allocations, 2-host range %.0f; want equal", large, small)
	}
}

// fuzzName maps a byte to a short name from a safe hostname alphabet,
// including digits so that ids next to digits are exercised.
func fuzzName(b byte) string {
	const safe = "ab9-.0z"
	n := int(b % 4)
	out := make([]byte, n)
	for i := range out {
		b /= 4
		out[i] = safe[(int(b)+i)%len(safe)]
	}
	return string(out)
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 0, 0, 4, 2})
	f.Add([]byte{1, 2, 0, 0, 1, 2, 7, 0, 5, 5, 0, 9})
	f.Add([]byte{0xff, 0x13, 200, 15, 0xff, 0x13, 100, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 4*64 {
			ops = ops[:4*64]
		}
		var l List
		var want []string
		for i := 0; i+4 <= len(ops); i += 4 {
			prefix, suffix := fuzzName(ops[i]), fuzzName(ops[i+1])
			lo := int(ops[i+2])
			hi := lo + int(ops[i+3]%16)
			l.AppendRange(prefix, lo, hi, suffix)
			for id := lo; id <= hi; id++ {
				want = append(want, prefix+strconv.Itoa(id)+suffix)
			}
		}
		s := l.String()
		if l.Len() != len(want) {
			t.Fatalf("Len() = %d, want %d", l.Len(), len(want))
		}
		checkOneBracket(t, s)
		got, err := Expand(s, len(want))
		if err != nil {
			t.Fatalf("Expand(%q): %v", s, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Expand(%q) = %q, want %q", s, got, want)
		}
	})
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"", "foo[1-3]", "foo[1,3-5]bar", "foo[00-02]", "a,b[1-2],c",
		"js-w-[0-1]-[0-3]", "foo[1-[2]]", "a[0-99999999999999999999]", "x[3-1]", "a,,b"} {
		f.Add(s)
	}
	const limit = 64
	f.Fuzz(func(t *testing.T, s string) {
		hosts, err := Expand(s, limit)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrLimit) {
				t.Fatalf("Expand(%q) error %v wraps neither ErrSyntax nor ErrLimit", s, err)
			}
			return
		}
		if len(hosts) > limit {
			t.Fatalf("Expand(%q) returned %d hosts, limit %d", s, len(hosts), limit)
		}
		for _, h := range hosts {
			if h == "" {
				t.Fatalf("Expand(%q) produced an empty host", s)
			}
			if strings.ContainsAny(h, "[],") {
				t.Fatalf("Expand(%q) produced host %q with list syntax in it", s, h)
			}
		}
	})
}

func BenchmarkString10000(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var l List
		appendJobSet(&l, "js", "w", 100, 100)
		if s := l.String(); len(s) == 0 {
			b.Fatal("empty")
		}
	}
}

func BenchmarkAppendRange1M(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var l List
		for j := 0; j < 1000; j++ {
			l.AppendRange("js-w-"+strconv.Itoa(j)+"-", 0, 999, "")
		}
		if l.Len() != 1000000 {
			b.Fatalf("Len() = %d", l.Len())
		}
	}
}
