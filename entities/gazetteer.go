package entities

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// The name lists (see namelists/NOTICE.md): one lower-case name a line, sorted.
var (
	//go:embed namelists/given.txt
	givenList string
	//go:embed namelists/family.txt
	familyList string
)

// nameLists are the lists split once, on first use: a server that never looks for names
// never pays for them.
var nameLists = sync.OnceValues(func() (given, family []string) {
	return strings.Fields(givenList), strings.Fields(familyList)
})

// givenName says whether w, in any case, is a given name of the list.
func givenName(w string) bool {
	given, _ := nameLists()
	_, ok := slices.BinarySearch(given, strings.ToLower(w))
	return ok
}

// familyName says whether w, in any case, is a family name of the list.
func familyName(w string) bool {
	_, family := nameLists()
	_, ok := slices.BinarySearch(family, strings.ToLower(w))
	return ok
}
