package main

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Length classes of the built-in texts. Their sizes (~20, ~120, ~600 wordpiece tokens) bracket
// what the batcher buckets by: one short window, a typical note, and a note that spans several
// windows.
const (
	lengthShort  = "short"
	lengthMedium = "medium"
	lengthLong   = "long"
)

// lengthClasses lists the classes in the order the report shows them.
var lengthClasses = []string{lengthShort, lengthMedium, lengthLong}

// Every name, number and place below is invented for load testing; none belongs to a real
// person. The notes still carry the kinds of things both models look for (conditions,
// drugs, doses, names, dates, identifiers) so that the server does realistic work.
var shortTexts = []string{
	"Patient reports chest pain radiating to the left arm; started aspirin 81 mg and nitroglycerin.",
	"Follow-up for type 2 diabetes: HbA1c 7.9%, continue metformin 1000 mg twice daily.",
	"Dr. Ellison Varga saw the patient on 03/14 for a persistent cough and low-grade fever.",
	"Allergic to penicillin; developed hives after amoxicillin in 2019. No anaphylaxis reported.",
}

var mediumTexts = []string{
	"Discharge summary. Mr. Tobias Fenwick, 67, was admitted on 02/11 with shortness of " +
		"breath and leg swelling. Echocardiogram showed an ejection fraction of 30%, consistent " +
		"with heart failure. He was diuresed with intravenous furosemide 40 mg twice daily. " +
		"Lisinopril was held for acute kidney injury (creatinine 1.9) and restarted at 5 mg. He " +
		"will see cardiology in two weeks; call 555-0142 if his weight rises by 2 kg.",
	"Progress note. Ms. Rosalind Achterberg, 54, presents with three days of dysuria and " +
		"urinary frequency without fever. Urinalysis was positive for nitrites. She takes " +
		"amlodipine 10 mg for hypertension and levothyroxine 75 mcg for hypothyroidism. Started " +
		"nitrofurantoin 100 mg twice daily for five days; culture pending. Contact: " +
		"r.achterberg@example.org, member ID ZX-448-201.",
}

// longParagraphs are joined, several times over in varied order, into the long texts.
var longParagraphs = []string{
	"History of present illness: the patient is a 72-year-old retired machinist, Mr. Quentin " +
		"Oyelaran, with chronic obstructive pulmonary disease, atrial fibrillation on apixaban " +
		"5 mg twice daily, and stage 3 chronic kidney disease, who presented to the emergency " +
		"department on 11/02 with four days of worsening dyspnea, productive cough with green " +
		"sputum and subjective fevers.",
	"In the emergency department he was tachypneic at 28 breaths per minute with an oxygen " +
		"saturation of 86% on room air, improving to 93% on 2 L nasal cannula. Chest radiograph " +
		"showed hyperinflation without focal consolidation. He received nebulized albuterol and " +
		"ipratropium, methylprednisolone 125 mg intravenously and a first dose of doxycycline.",
	"Hospital course: he was treated for an acute exacerbation of COPD with prednisone 40 mg " +
		"daily for five days and doxycycline 100 mg twice daily for seven days. Rate control of " +
		"his atrial fibrillation required an increase of diltiazem to 240 mg daily. Anticoagulation " +
		"was continued. Blood glucose rose to 260 on steroids and was covered with sliding-scale " +
		"insulin lispro, which was stopped at discharge.",
	"Social history: lives with his daughter, Imogen Oyelaran, at 41 Larkspur Terrace, " +
		"Millbrook; quit smoking in 2015 after a 45 pack-year history; drinks alcohol rarely. " +
		"Emergency contact phone 555-0199. Insurance policy number QK-77120-3.",
	"Plan at discharge: continue tiotropium 18 mcg inhaled daily and fluticasone-salmeterol " +
		"250/50 one puff twice daily, complete the steroid and antibiotic courses, pulmonary " +
		"rehabilitation referral placed, and follow-up with Dr. Marisol Techeira in pulmonary " +
		"clinic within one week. Repeat basic metabolic panel in three days to check potassium " +
		"and creatinine.",
	"Assessment of the left knee: moderate effusion, crepitus with flexion beyond 90 degrees, " +
		"no ligamentous laxity. Prior imaging showed tricompartmental osteoarthritis. Naproxen " +
		"was avoided given renal function; acetaminophen 1 g three times daily and a topical " +
		"diclofenac gel were recommended, with physiotherapy twice weekly.",
	"Medication reconciliation: apixaban 5 mg twice daily, diltiazem 240 mg daily, " +
		"tiotropium 18 mcg daily, atorvastatin 40 mg nightly and vitamin D 1000 units daily. " +
		"No known drug allergies. Vaccinations: influenza in October, pneumococcal in 2022.",
}

// buildLongTexts joins the paragraphs in a few rotations so that the long class is not one
// identical string, which a cache or a length-bucketed batcher could otherwise flatter.
func buildLongTexts() []string {
	const rotations = 3
	out := make([]string, 0, rotations)
	for r := 0; r < rotations; r++ {
		var b strings.Builder
		for i := range longParagraphs {
			if b.Len() > 0 {
				b.WriteString("\n\n")
			}
			b.WriteString(longParagraphs[(i+r)%len(longParagraphs)])
		}
		out = append(out, b.String())
	}
	return out
}

// Corpus holds the request bodies for every length class, encoded once so that the hot path
// does no JSON work.
type Corpus struct {
	bodies map[string][][]byte
}

// NewCorpus encodes the built-in texts.
func NewCorpus() (*Corpus, error) {
	c := &Corpus{bodies: map[string][][]byte{}}
	sets := map[string][]string{
		lengthShort:  shortTexts,
		lengthMedium: mediumTexts,
		lengthLong:   buildLongTexts(),
	}
	for class, texts := range sets {
		for _, t := range texts {
			b, err := json.Marshal(struct {
				Text string `json:"text"`
			}{t})
			if err != nil {
				return nil, fmt.Errorf("encode %s text: %w", class, err)
			}
			c.bodies[class] = append(c.bodies[class], b)
		}
	}
	return c, nil
}

// Body returns the request body number i (taken modulo the class size) of a length class.
func (c *Corpus) Body(class string, i uint64) []byte {
	set := c.bodies[class]
	return set[i%uint64(len(set))]
}
