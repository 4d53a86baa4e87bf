package main

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v10"

	"github.com/sluice-serving/sluice/settings"
)

// How a configuration declares its variables. Each package whose settings the server reads
// tags its own Config, next to the fields (batcher.Config, scheduler.Config, ...); this
// command's Config only composes them, one section per field (see Config). The tags are
// caarlos0/env's, read with the prefix SLUICE_:
//
//	env:"NAME"         the variable SLUICE_NAME sets the field
//	envDefault:"v"     its value when the variable is unset or empty
//	unit:"ms" | "s"    a time.Duration field's variable is a whole number of that unit
//	envEach:"k=NAME,…" an array field, one variable per element, the element of index i
//	                   named k in the field's Problems ("Weights[k]"); envEachDefault lists
//	                   the elements' defaults in the same order
//
// A nested struct without an env tag is read field by field (engine.RuntimeOptions.CUDA). A
// Problem a package's Validate reports names its field as the package does ("MaxWait",
// "CUDA.DeviceID", "Weights[bulk]"), which is the path these declarations are found by.

// variable is one setting as a section of Config declares it.
type variable struct {
	name   string // SLUICE_ included
	def    string
	hasDef bool
	field  string // the field as its package names it in a Problem
	index  []int  // the field, from the section
	elem   int    // the envEach element; -1 for a whole field
	typ    reflect.Type
	unit   time.Duration // a duration's unit; 0 for other types
}

var durationType = reflect.TypeFor[time.Duration]()

// units are the units a duration's variable may count.
var units = map[string]time.Duration{"ms": time.Millisecond, "s": time.Second}

// declared lists the variables a section's type declares, in field order.
func declared(t reflect.Type) []variable {
	var out []variable
	var walk func(t reflect.Type, path string, index []int)
	walk = func(t reflect.Type, path string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			idx := append(slices.Clone(index), i)
			field := path + f.Name
			if each, ok := f.Tag.Lookup("envEach"); ok {
				defs := strings.Split(f.Tag.Get("envEachDefault"), ",")
				for e, item := range strings.Split(each, ",") {
					key, name, _ := strings.Cut(item, "=")
					if f.Type.Kind() != reflect.Array || e >= f.Type.Len() || len(defs) != f.Type.Len() {
						panic(fmt.Sprintf("%s.%s: envEach %q does not fit %s with defaults %q", t, f.Name, each, f.Type, defs))
					}
					out = append(out, variable{name: "SLUICE_" + name, def: defs[e], hasDef: true,
						field: field + "[" + key + "]", index: idx, elem: e, typ: f.Type.Elem()})
				}
				continue
			}
			name, tagged := f.Tag.Lookup("env")
			if !tagged || name == "" {
				if f.Type.Kind() == reflect.Struct {
					walk(f.Type, field+".", idx)
				}
				continue
			}
			if name == "-" {
				continue
			}
			v := variable{name: "SLUICE_" + name, field: field, index: idx, elem: -1, typ: f.Type}
			v.def, v.hasDef = f.Tag.Lookup("envDefault")
			if f.Type == durationType {
				if v.unit = units[f.Tag.Get("unit")]; v.unit == 0 {
					panic(fmt.Sprintf("%s.%s: a duration's variable needs its unit (unit:\"ms\" or \"s\")", t, f.Name))
				}
			}
			out = append(out, v)
		}
	}
	walk(t, "", nil)
	return out
}

// sections are Config's parts, each read from the environment on its own: this command's own
// settings (Own) and each package's Config.
func (c *Config) sections() []reflect.Value {
	v := reflect.ValueOf(c).Elem()
	out := make([]reflect.Value, 0, v.NumField())
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() && v.Field(i).Kind() == reflect.Struct {
			out = append(out, v.Field(i))
		}
	}
	return out
}

// variables are every variable Config declares, each once: a variable two packages read (the
// class weights: the batcher's and the scheduler's) is declared by both, with one default.
func variables() []variable {
	var c Config
	var out []variable
	seen := map[string]variable{}
	for _, s := range c.sections() {
		for _, v := range declared(s.Type()) {
			if first, ok := seen[v.name]; ok {
				if first.def != v.def || first.hasDef != v.hasDef || first.unit != v.unit {
					panic(fmt.Sprintf("%s is declared twice with different defaults or units: %q and %q", v.name, first.def, v.def))
				}
				continue
			}
			seen[v.name] = v
			out = append(out, v)
		}
	}
	return out
}

// load reads every section from vars, and adds a line per variable that does not parse to
// problems (variable -> line).
func (c *Config) load(vars map[string]string, problems map[string]string) {
	opts := env.Options{Environment: vars, Prefix: "SLUICE_", FuncMap: map[reflect.Type]env.ParserFunc{
		// A duration's variable is a count of its unit, read as the library reads an int;
		// scaled by the unit below.
		durationType: func(v string) (any, error) {
			n, err := strconv.ParseInt(v, 10, 32)
			return time.Duration(n), err
		},
	}}
	for _, s := range c.sections() {
		decl := declared(s.Type())
		if err := env.ParseWithOptions(s.Addr().Interface(), opts); err != nil {
			var agg env.AggregateError
			errs := []error{err}
			if errors.As(err, &agg) {
				errs = agg.Errors
			}
			for _, e := range errs {
				name, line := e.Error(), e.Error()
				var pe env.ParseError
				if errors.As(e, &pe) {
					typ := pe.Type.String()
					for _, v := range decl {
						if v.elem < 0 && s.Type().FieldByIndex(v.index).Name == pe.Name {
							name = v.name
							if v.unit != 0 {
								typ = "int" // a count of the unit
							}
							break
						}
					}
					line = fmt.Sprintf("%s is not a valid %s (%v)", name, typ, pe.Err)
				}
				problems[name] = line
			}
		}
		for _, v := range decl {
			f := s.FieldByIndex(v.index)
			switch {
			case v.unit != 0:
				f.SetInt(f.Int() * int64(v.unit))
			case v.elem >= 0:
				value := vars[v.name]
				if value == "" {
					value = v.def
				}
				n, err := strconv.ParseInt(value, 10, 32)
				if err != nil {
					problems[v.name] = fmt.Sprintf("%s is not a valid %s (%v)", v.name, v.typ, err)
					continue
				}
				f.Index(v.elem).SetInt(n)
			}
		}
	}
}

// value is a numeric variable's value as its variable reads it (a duration in its unit, a
// fraction rounded up, an unset pointer 0), the value as a message shows it, and whether it
// is numeric. A fraction past the int64s reads as their nearest end, NaN as the top one:
// converted as they were, they came out as the most negative int64 (amd64), under every
// bound. A fraction is shown as it is, not as the end it reads as.
func (c *Config) value(name string) (n int64, shown string, ok bool) {
	for _, s := range c.sections() {
		for _, v := range declared(s.Type()) {
			if v.name != name {
				continue
			}
			f := s.FieldByIndex(v.index)
			if v.elem >= 0 {
				f = f.Index(v.elem)
			}
			if f.Kind() == reflect.Pointer {
				if f.IsNil() {
					return 0, "0", true
				}
				f = f.Elem()
			}
			switch {
			case v.unit != 0:
				n = f.Int() / int64(v.unit)
			case f.CanInt():
				n = f.Int()
			case f.CanFloat():
				return saturated(f.Float()), strconv.FormatFloat(f.Float(), 'g', -1, 64), true
			default:
				return 0, "", false
			}
			return n, strconv.FormatInt(n, 10), true
		}
	}
	return 0, "", false
}

// saturated is f rounded up to an int64, or the nearest end of the int64s where it lies
// beyond them; NaN is the top end.
func saturated(f float64) int64 {
	switch {
	case math.IsNaN(f), f >= math.MaxInt64: // MaxInt64 as a float64 is 2^63, itself past the int64s
		return math.MaxInt64
	case f < math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Ceil(f))
}

// byTags names a Problem's field by the declarations of the types given, the first that
// declares it: a package's Config, or a section of this command that sets some of its fields
// (an endpoint's watermarks).
func byTags(types ...reflect.Type) func(field string) (string, bool) {
	return func(field string) (string, bool) {
		for _, t := range types {
			for _, v := range declared(t) {
				if v.field == field {
					return v.name, true
				}
			}
		}
		return "", false
	}
}

// byMap names a Problem's field by a map (field -> variable): for the packages whose settings
// this command still maps itself (handlers, deid).
func byMap(names map[string]string) func(field string) (string, bool) {
	return func(field string) (string, bool) {
		name, ok := names[field]
		return name, ok
	}
}

// packageProblems turns the settings.Problems a package's Validate joined into problems named
// by the variables that set the fields. An error that is not a settings.Problem is reported
// under the variable "?".
func packageProblems(err error, names func(field string) (string, bool)) []problem {
	problems, other := settings.Problems(err)
	out := make([]problem, 0, len(problems)+len(other))
	for _, p := range problems {
		name, ok := names(p.Field)
		if !ok {
			name = p.Field // a field no variable sets: a wiring bug, still reported
		}
		out = append(out, problem{name, p.Text})
	}
	for _, e := range other {
		out = append(out, problem{"?", e.Error()})
	}
	return out
}
