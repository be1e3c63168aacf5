package settings

// Table returns the settings table's rows, in documentation order: what
// a user's page of the settings (README's table, the command's --help)
// is generated from, so that it never lists a setting that is not there
// or misses one that is. The rows are copies.
func Table() []Setting {
	rows := make([]Setting, len(table))
	copy(rows, table)
	return rows
}

// DefaultText is the row's default as a user's page words it: the
// default value, else DefaultDoc, else "none".
func (d Setting) DefaultText() string {
	switch {
	case d.DefaultDoc != "":
		return d.DefaultDoc
	case d.Default != "":
		return d.Default
	}
	return "none"
}
