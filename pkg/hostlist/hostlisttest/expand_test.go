package hostlisttest

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

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
