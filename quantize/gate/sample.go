package gate

// Sample is the built-in text the int8 gate compares a model's float32 and int8
// answers on: invented notes (no person in them exists) that carry the identifiers a PII
// model finds and the findings, drugs and procedures a clinical one does, in the layouts
// clinical text comes in: narrative, headers, lists, messages, letters.
var Sample = []string{
	"Maria Lopez, 58, was seen at Mercy Hospital on 03/14/2024 for chest pain and started metoprolol 25 mg; call (415) 555-0132.",
	"Patient: Tobias Wren  DOB: 11/02/1961  MRN: 40917733  Admitted: 2024-01-07 to St. Agnes Medical Center.",
	"Mr. Desmond Achterberg is a 72-year-old man with type 2 diabetes mellitus, hypertension and chronic kidney disease stage 3.",
	"He reports shortness of breath on exertion and bilateral ankle edema for two weeks; an echocardiogram showed an ejection fraction of 35%.",
	"Discharge medications: furosemide 40 mg daily, lisinopril 10 mg daily, atorvastatin 40 mg at night, aspirin 81 mg daily.",
	"Please send the results to Dr. Priya Raman at Lakeside Family Clinic, 1187 Alder Street, Suite 4, Portland, OR 97205.",
	"Ms. Helena Vukovic (DOB 07/19/1985) called on 02/28/2024 asking to move her appointment; best number 503-555-0198.",
	"CT of the abdomen and pelvis with contrast: no acute appendicitis; a 2.1 cm simple cyst in the left kidney.",
	"Insurance member ID ZQX448120937, group 55102; billing account 7730-1185-22 at Northgate Pharmacy.",
	"Assessment: community-acquired pneumonia of the right lower lobe. Plan: ceftriaxone 1 g IV daily and azithromycin 500 mg.",
	"Email from jonah.pell@examplemail.com on 5/3/2024: my mother Ruth Pell still has a cough after the amoxicillin course.",
	"Lab results 09/09/2023: hemoglobin 9.8 g/dL, creatinine 1.6 mg/dL, potassium 5.4 mmol/L, HbA1c 8.2%.",
	"Referred by Dr. Samuel Okafor of Riverbend Cardiology for evaluation of atrial fibrillation with rapid ventricular response.",
	"The patient, a 34-year-old woman, presented with migraine with aura and was given sumatriptan 50 mg with relief.",
	"Address on file: 42 Quarry Lane, Apt 7B, Springfield, IL 62704. Emergency contact: brother Felix Marsh, (217) 555-0144.",
	"History of present illness: three days of fever, dysuria and right flank pain; urinalysis positive for nitrites and leukocytes.",
	"Follow-up with Nurse Practitioner Ava Lindqvist at Harbor View Clinic on 04/22/2024 at 10:30 for wound check after cholecystectomy.",
	"SSN on the intake form: 078-05-1120. Driver's license D4412098 (CA). Preferred name: Sunny.",
	"Colonoscopy on 12/05/2023 removed two tubular adenomas from the sigmoid colon; repeat in three years.",
	"Mrs. Odette Carmichael, 81, fell at home on 01/15/2024 and sustained a left hip fracture treated with hemiarthroplasty.",
	"Started on apixaban 5 mg twice daily for deep vein thrombosis of the left popliteal vein found on duplex ultrasound.",
	"Text from patient Leon Baptiste: can you refill my albuterol inhaler and send it to CVS on Market St? thanks",
	"MRI of the lumbar spine showed a disc herniation at L4-L5 compressing the right L5 nerve root; physical therapy ordered.",
	"Dear Dr. Hannah Ferreira, thank you for seeing Gabriel Novak (DOB 03/30/1990) who has ulcerative colitis on mesalamine.",
	"Vitals: BP 148/92, HR 104, temperature 38.6 C, SpO2 93% on room air; chest x-ray with right-sided consolidation.",
	"Past surgical history: appendectomy in 2009, left knee arthroscopy in 2016, cesarean section in 2019.",
	"Patient Ingrid Solberg, age 45, works as a teacher at Maple Grove Elementary and lives at 903 Birch Road, Duluth, MN.",
	"Diagnosed with major depressive disorder and generalized anxiety disorder; sertraline increased from 50 mg to 100 mg.",
	"Fax the operative report to 312-555-0177 attention Medical Records, Lakeshore General Hospital, Chicago.",
	"On 06/11/2024 Mr. Arturo Villanueva underwent percutaneous coronary intervention with a drug-eluting stent to the LAD.",
	"Allergies: penicillin (rash), sulfa drugs (hives). Immunizations: influenza vaccine 10/2023, Tdap 2021.",
	"Telehealth visit with Kenji Watanabe, 29, for asthma exacerbation; prednisone 40 mg for five days and a spacer prescribed.",
}
