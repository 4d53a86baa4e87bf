package deid

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// Policy is a named de-identification profile: the action for each kind of identifier, and
// what the result must carry. The profiles are OpenMed's (schema version 1), restated for the
// kinds Sluice's models label.
type Policy struct {
	// Name is the canonical name ("hipaa_safe_harbor").
	Name string
	// ByCategory is the action for each category; ByLabel overrides it for one canonical kind.
	ByCategory [4]Action
	ByLabel    map[string]Action
	// KeepMapping returns the mapping whatever the request says; ReversibleID gives every
	// redaction a keyed id; SweepMandatory runs the pattern sweep whatever the request says.
	KeepMapping, ReversibleID, SweepMandatory bool
	// StrictNoLeak, ThresholdProfile and ArbitrationMode are reported as OpenMed reports them.
	StrictNoLeak     bool
	ThresholdProfile string
	ArbitrationMode  string
}

// PolicySchemaVersion is the profile schema version reported in results.
const PolicySchemaVersion = 1

// action is what p does with a span of kind k.
func (p *Policy) action(k kind) Action {
	if a, ok := p.ByLabel[k.canonical]; ok {
		return a
	}
	return p.ByCategory[k.category]
}

func all(a Action) [4]Action { return [4]Action{a, a, a, a} }

// byCat is the actions of the direct, quasi, sensitive and clinical categories.
func byCat(direct, quasi, sensitive, clinical Action) [4]Action {
	return [4]Action{direct, quasi, sensitive, clinical}
}

func labels(a Action, names ...string) map[string]Action {
	m := make(map[string]Action, len(names))
	for _, n := range names {
		m[n] = a
	}
	return m
}

// strict marks a profile OpenMed runs in its strict, union-of-detectors posture.
func strict(p Policy) Policy {
	p.StrictNoLeak, p.ThresholdProfile, p.ArbitrationMode = true, "strict_no_leak", "high_recall_union"
	return p
}

func balanced(p Policy) Policy {
	p.ThresholdProfile, p.ArbitrationMode = "balanced", "balanced"
	return p
}

var (
	personal  = []string{"FIRST_NAME", "MIDDLE_NAME", "LAST_NAME", "PERSON", "USERNAME", "EMAIL", "PHONE", "URL"}
	nationals = []string{"ID_NUM", "SSN"}
)

// policies are OpenMed's profiles in its order.
var policies = []Policy{
	balanced(Policy{Name: "hipaa_safe_harbor", ByCategory: all(ActMask), SweepMandatory: true}),
	balanced(Policy{Name: "hipaa_expert_review_assist", ByCategory: byCat(ActRedact, ActRedact, ActRedact, ActKeep)}),
	balanced(Policy{Name: "gdpr_pseudonymization", ByCategory: byCat(ActReplace, ActReplace, ActReplace, ActKeep),
		SweepMandatory: true, KeepMapping: true, ReversibleID: true}),
	strict(Policy{Name: "gdpr_art9_health", ByCategory: byCat(ActReplace, ActMask, ActMask, ActMask),
		SweepMandatory: true, KeepMapping: true, ReversibleID: true}),
	balanced(Policy{Name: "research_limited_dataset", ByCategory: byCat(ActMask, ActKeep, ActMask, ActKeep), SweepMandatory: true}),
	strict(Policy{Name: "strict_no_leak", ByCategory: all(ActMask), SweepMandatory: true}),
	balanced(Policy{Name: "clinical_minimal_redaction", ByCategory: byCat(ActMask, ActKeep, ActKeep, ActKeep)}),
	balanced(Policy{Name: "clinical_preserve", ByCategory: byCat(ActMask, ActKeep, ActKeep, ActKeep),
		ByLabel: labels(ActMask, "LOCATION", "ZIPCODE"), SweepMandatory: true}),
	balanced(Policy{Name: "canada_pipeda", ByCategory: byCat(ActReplace, ActReplace, ActReplace, ActKeep),
		ByLabel: labels(ActMask, nationals...), SweepMandatory: true, KeepMapping: true, ReversibleID: true}),
	balanced(Policy{Name: "uk_ico_anonymisation", ByCategory: byCat(ActMask, ActReplace, ActReplace, ActKeep),
		SweepMandatory: true, KeepMapping: true, ReversibleID: true}),
	balanced(Policy{Name: "australia_privacy_act", ByCategory: byCat(ActReplace, ActReplace, ActReplace, ActKeep),
		ByLabel: labels(ActMask, nationals...), SweepMandatory: true}),
	strict(Policy{Name: "china_pipl", ByCategory: byCat(ActReplace, ActMask, ActMask, ActMask),
		SweepMandatory: true, KeepMapping: true, ReversibleID: true}),
	balanced(Policy{Name: "india_dpdp_act", ByCategory: byCat(ActReplace, ActMask, ActMask, ActKeep), SweepMandatory: true}),
	strict(Policy{Name: "africa_malabo_baseline", ByCategory: all(ActMask), SweepMandatory: true}),
	strict(Policy{Name: "za_popia", ByCategory: all(ActMask), SweepMandatory: true,
		ByLabel: labels(ActReplace, append(slices.Clone(personal), "LOCATION", "STREET_ADDRESS", "ZIPCODE", "ORGANIZATION")...)}),
	strict(Policy{Name: "ng_ndpa", ByCategory: all(ActMask), SweepMandatory: true, ByLabel: labels(ActReplace, personal...)}),
	strict(Policy{Name: "ke_dpa", ByCategory: all(ActMask), SweepMandatory: true}),
	strict(Policy{Name: "india_health_id", ByCategory: byCat(ActMask, ActKeep, ActKeep, ActKeep), SweepMandatory: true}),
	strict(Policy{Name: "eg_pdpl", ByCategory: all(ActMask), SweepMandatory: true}),
	strict(Policy{Name: "ma_law_09_08", ByCategory: all(ActMask), SweepMandatory: true}),
}

// policyAliases are the other names OpenMed accepts.
var policyAliases = map[string]string{
	"gdpr": "gdpr_pseudonymization", "gdpr_health": "gdpr_art9_health", "pipeda": "canada_pipeda",
	"uk_ico": "uk_ico_anonymisation", "au_privacy": "australia_privacy_act", "kenya_dpa": "ke_dpa",
}

// ErrBlankPolicy and ErrUnknownPolicy are LookupPolicy's refusals.
var (
	ErrBlankPolicy   = errors.New("policy must not be blank")
	ErrUnknownPolicy = errors.New("unknown policy; expected one of: " + strings.Join(PolicyNames(), ", "))
)

// PolicyNames is every accepted name: the canonical ones in OpenMed's order, then the
// aliases sorted.
func PolicyNames() []string {
	names := make([]string, 0, len(policies)+len(policyAliases))
	for _, p := range policies {
		names = append(names, p.Name)
	}
	var aliases []string
	for a := range policyAliases {
		aliases = append(aliases, a)
	}
	slices.Sort(aliases)
	return append(names, aliases...)
}

// LookupPolicy finds a profile by name or alias, as OpenMed reads them: surrounding space,
// case and hyphens for underscores do not matter.
func LookupPolicy(name string) (*Policy, error) {
	n := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")
	if n == "" {
		return nil, ErrBlankPolicy
	}
	if target, ok := policyAliases[n]; ok {
		n = target
	}
	for _, p := range policies {
		if p.Name == n {
			p.ByLabel = maps.Clone(p.ByLabel) // the caller's copy: the table stays as it is
			return &p, nil
		}
	}
	return nil, ErrUnknownPolicy
}
