package settings

import (
	"errors"
	"fmt"
	"testing"
)

func TestCheckReportsEveryProblemByField(t *testing.T) {
	inner := For("inner")
	inner.Addf("Size", "must be at least 1, got %d", 0)
	check := For("outer")
	check.Addf("Workers", "must be between %d and %d, got %d", 1, 8, 9)
	check.Include(inner.Err())
	check.Include(nil)
	err := check.Err()
	if err == nil || err.Error() != "outer: Workers must be between 1 and 8, got 9\ninner: Size must be at least 1, got 0" {
		t.Fatalf("err = %v", err)
	}
	problems, other := Problems(errors.Join(fmt.Errorf("model x: %w", errors.New("not found")), err))
	if len(problems) != 2 || len(other) != 1 {
		t.Fatalf("joined with another error: %v %v", problems, other)
	}
	problems, other = Problems(err)
	if len(other) != 0 || len(problems) != 2 || problems[0].Field != "Workers" || problems[1].Package != "inner" ||
		problems[1].Text != "must be at least 1, got 0" {
		t.Fatalf("problems %+v, other %v", problems, other)
	}
	if empty := For("x"); empty.Err() != nil {
		t.Fatal("a check with no problems is an error")
	}
}

func TestNearestSuggestsOnlyWhatIsClose(t *testing.T) {
	known := []string{"SLUICE_DEID_HASH_KEY", "SLUICE_DEVICE", "SLUICE_BATCH_MAX_SIZE"}
	for name, want := range map[string]string{
		"SLUICE_DEID_HASHKEY":      "SLUICE_DEID_HASH_KEY",
		"SLUICE_DEVISE":            "SLUICE_DEVICE",
		"SLUICE_BATCH_MAXSIZE":     "SLUICE_BATCH_MAX_SIZE",
		"SLUICE_SOMETHING_ELSE_AT": "",
	} {
		if got := Nearest(name, known); got != want {
			t.Errorf("Nearest(%s) = %q, want %q", name, got, want)
		}
	}
	if got := Nearest("X", nil); got != "" {
		t.Errorf("nothing known: %q", got)
	}
}
