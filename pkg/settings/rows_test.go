package settings

import "testing"

// Table is every row, in order, and a caller cannot change the table
// through it.
func TestTableCopies(t *testing.T) {
	rows := Table()
	if len(rows) != len(table) {
		t.Fatalf("Table() has %d rows, the table %d", len(rows), len(table))
	}
	for i := range rows {
		if rows[i].Name != table[i].Name {
			t.Errorf("row %d is %q, want %q", i, rows[i].Name, table[i].Name)
		}
	}
	rows[0].Name = "changed"
	if table[0].Name == "changed" {
		t.Error("Table() returned the table itself")
	}
}

func TestDefaultText(t *testing.T) {
	cases := []struct {
		row  Setting
		want string
	}{
		{Setting{Default: "8050"}, "8050"},
		{Setting{DefaultDoc: "Flux's"}, "Flux's"},
		{Setting{Default: "x", DefaultDoc: "derived"}, "derived"},
		{Setting{}, "none"},
	}
	for _, c := range cases {
		if got := c.row.DefaultText(); got != c.want {
			t.Errorf("%+v: DefaultText() = %q, want %q", c.row, got, c.want)
		}
	}
}
