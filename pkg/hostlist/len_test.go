package hostlist

// Len returns the number of hosts in the list. Only tests need it (the
// renderer knows its pod counts), so it is counted here, from the ranges.
func (l *List) Len() int {
	n := 0
	for _, s := range l.spans {
		n += s.hi - s.lo + 1
	}
	return n
}
