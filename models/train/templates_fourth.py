"""The fourth edition of the templates, written in the fifteenth session by seven writers
who saw the syntax of templates.py and a few train templates, never the held-out ones, and
no other file of the corpus. Lines whose literal text holds an entry of a word list (train
or held-out), whose word next to a slot is one that train entries of that slot's type start
or end with, or that repeat an earlier template were left out. It adds templates only: the
word lists keep their three editions, and the shared vocabulary and the causal LM are built
from the first three editions (common.VOCAB_EDITIONS).
"""

# Narrative sentences: outpatient and primary care; inpatient, ED, operative, ICU,
# consult, radiology and pathology; specialty and allied-health notes, telegraphic shorthand.
NARRATIVE_FOURTH = r"""
Pt is a {AGE} yo presenting to clinic for f/u of {COND}, last seen {DATE}.
She reports <intermittent|constant|worsening> {COND} in the {ANAT} for the past {N} weeks.
Since starting {MED} {DOSE} {FREQ}, he notes <mild|some|significant> improvement in symptoms.
Assessment: {COND}, <well controlled|suboptimally controlled|stable> on current regimen.
Plan: increase {MED} to {DOSE} {ROUTE} {FREQ} and recheck {TEST} in {N} weeks.
Discussed risks and benefits of {MED}; patient agrees to trial.
Most recent {TEST} was {RESULT} on {DATE}, up from prior.
{COND} — continue {MED} {DOSE} {FREQ=daily}; f/u in {N} months.
HPI: {AGE}-year-old <man|woman> with hx of {COND} and {COND} here for annual physical.
Patient states the {COND} began after <starting|stopping> {MED} about {N} days ago.
On exam, {ANAT} is <tender to palpation|mildly swollen|without {COND=deformity}>.
Counseled on smoking cessation; offered {MED} {DOSE} patch, pt <declined|accepted>.
Stopped {MED} due to {COND}; will switch to {MED} {DOSE} {FREQ}.
ROS otherwise negative except as noted in HPI ({COND}, {COND}).
{TEST} today {RESULT}; goal less than {RESULT}.
He was referred for {PROC} by Dr. {LAST} and is awaiting scheduling.
Pt c/o {COND} x {N} days, worse at night, relieved partially with {MED}.
A/P: {AGE} yo w/ {COND}. Will obtain {TEST} and {TEST}; return prn.
Her daughter {FIRST} accompanies her today and helps manage medications.
Taking {MED} {DOSE} {ROUTE} {FREQ} without side effects.
Reports adherence to {MED} but admits missing doses <once a week|on weekends|occasionally>.
No changes to meds today. {COND} stable.
{ANAT} exam notable for {COND}; remainder unremarkable.
Will taper {MED} by {DOSE} every {N} days until off.
Patient was seen at {HOSP} on {DATE} for {COND} and discharged on {MED}.
Vitals reviewed; {TEST} {RESULT}, {TEST} {RESULT}.
Chief complaint: "my {ANAT} has been hurting for {N} weeks."
Pt reports that {COND} <has resolved|persists|is slightly better> since last visit.
Recommended {MED} {DOSE} {ROUTE} {FREQ=prn} for {COND}, not to exceed {N} doses per day.
s/p {PROC} on {DATE}, healing well, incision clean/dry/intact.
Hx significant for {COND}, {COND}, and remote {PROC}.
She would like to discuss {PROC} options; provided handout and referral.
Given elevated {TEST} ({RESULT}), will start {MED} {DOSE} {FREQ=nightly}.
No {COND=focal neurologic deficits}. {ANAT} strength 5/5 b/l.
Impression: likely {COND}; r/o {COND}.
Pt's {COND} flared after running out of {MED}; refill sent to {PHARM}.
The patient, {NAME}, is a {AGE}-year-old seen today for {COND}.
Denies {COND}. Denies {COND}. Positive for {COND}.
He reports {N} episodes of {COND} in the last month, each lasting minutes.
{MED} was held on {DATE} because of {COND} and has not been restarted.
Mild {COND} noted over the {ANAT}, no {COND=fluctuance}.
Plan to repeat {TEST} fasting; if still above {RESULT}, will add {MED}.
Continue {MED} {DOSE} {FREQ} and {MED} {DOSE} {FREQ}.
She is tolerating {MED} well aside from mild {COND}.
Exam: {ANAT} <clear|normal|intact>, {ANAT} <supple|nontender|without {COND=lesions}>.
Pt counseled regarding expected course of {COND} and return precautions.
Last {PROC} {DATE}, reportedly normal; due again in {N} years.
Encouraged to call {PHONE} with any worsening symptoms.
{COND}: new diagnosis today. Educated on lifestyle changes and started {MED}.
Patient is a poor historian; collateral obtained from wife, {FIRST} {LAST}.
{TEST} showed {RESULT}, consistent with {COND}.
Complains of {COND} radiating to the {ANAT}, rated {N}/10.
Switching from {MED} to {MED} given cost concerns; same dose equivalent.
Pt has been using {MED} {DOSE} {ROUTE} {FREQ} for {COND} with good effect.
{TEST} recheck in office was {RESULT}; pt reports home readings similar.
She denies any recent travel, sick contacts, or {COND}.
Assessment and plan: 1. {COND} — start {MED} {DOSE}. 2. {COND} — monitor.
Previously tried {MED} and {MED}, both discontinued for {COND}.
Patient seen with interpreter; understanding of {COND} and treatment plan confirmed.
{ANAT} with mild {COND=effusion}, no {COND=warmth}, negative {TEST}.
Given {COND}, advised to avoid {MED} and similar agents.
Reports {COND} is worse with exertion and improves with rest over {N} minutes.
Labs from {DATE}: {TEST} {RESULT}; {TEST} {RESULT}; otherwise WNL.
Will refer to {HOSP} for {PROC} evaluation.
Pt instructed to take {MED} {FREQ=with food} to reduce {COND}.
He has not had {COND} since the {DOSE} dose was started.
Physical exam: well-appearing, NAD. {ANAT} without {COND=tenderness}.
Annual wellness visit. Immunizations reviewed; {MED} given {ROUTE} today.
Medication reconciliation completed; {MED} removed from list as pt no longer taking.
{COND} likely secondary to {MED}; will reduce dose to {DOSE}.
Patient expresses concern about {COND} given family history in <mother|father|sibling>.
Mother dx with {COND} at age {AGE}; father deceased from {COND}.
Return to clinic in {N} weeks or sooner if {COND} worsens.
Screening {TEST} ordered; pt due since {DATE}.
{FIRST} reports sleeping {N} hours per night with frequent waking due to {COND}.
Plan discussed with Dr. {LAST}, who agrees with starting {MED}.
Prior auth submitted for {MED}; will use {MED} as bridge.
The {ANAT} pain is <sharp|dull|aching|burning> and does not radiate.
Pt requests refill of {MED} {DOSE}; last fill {DATE}, {N} tablets remaining.
Increased {MED} from {DOSE} to {DOSE} at last visit, with {TEST} now {RESULT}.
{COND} improved, {COND} unchanged.
{COND=Tenderness} over {ANAT} reproduces the {COND=pain}; no {COND=bony step-off}.
Pt declines {PROC} at this time; risks of deferring discussed and documented.
Advised ice, rest, and {MED} {DOSE} {FREQ} prn for {N} days.
She was started on {MED} by her cardiologist at {HOSP} last month.
Patient reports {COND} occurs <mostly in the morning|after meals|at random>.
Given borderline {TEST}, lifestyle modification first, repeat in {N} months.
{MED} {DOSE} {ROUTE} {FREQ} x {N} days sent to pharmacy.
Exam of the {ANAT} reveals <{COND=crepitus}|{COND=decreased ROM}|{COND=point tenderness}>, no {COND=swelling}.
He presents with his son for evaluation of {COND} noticed {N} weeks ago.
No known drug allergies. Intolerant of {MED} ({COND}).
Suspect {COND}; empiric {MED} started while awaiting {TEST}.
Reviewed outside records from {HOSP}, including {TEST} dated {DATE}.
Patient works as a <teacher|truck driver|nurse|cashier>; {COND} interfering with work.
{COND} has been stable for {N} years without treatment.
Counseled on safe storage and disposal of {MED}.
Extremities: no {COND}, pulses 2+ in the {ANAT} b/l.
Pt reports that {MED} makes her feel <dizzy|tired|nauseated> around {TIME}.
Moved {MED} dosing to {FREQ=bedtime} to minimize daytime {COND}.
Will check {TEST}, {TEST}, {TEST} prior to next visit.
Pt has a hx of {PROC} in {DATE} complicated by {COND}.
Diagnosis of {COND} discussed, including prognosis and treatment options.
She tried OTC {MED} without relief.
{TEST} {RESULT} (ref range given), mildly elevated; likely lab variation.
Discussed {COND} warning signs; knows to go to ED if {COND} develops.
Social hx: lives alone in {CITY}, drinks {N} beers/week, never smoker.
Return precautions reviewed with pt and husband {FIRST}.
Follow-up: {N} wks, sooner prn. Pt to bring {TEST=BP} log.
Fall risk assessed; {COND} contributing, recommend {PROC=PT} and d/c {MED}.
The {ANAT} appears <pale|erythematous|dusky> with {TEST=capillary refill} under 2 seconds.
Restarting {MED} {DOSE} {FREQ} now that {TEST} has normalized to {RESULT}.
Pt reluctant to start {MED} due to concern for {COND}; will revisit next visit.
{COND}. Likely viral. Supportive care, fluids, {MED} {FREQ=prn}.
Per patient, {COND} resolved after {N} days of {MED}.
{TEST=Orthostatic vitals} negative. {TEST} {RESULT}.
{AGE} yo F here for {COND}; {TEST=pregnancy test} {RESULT}.
Advised to hold {MED} {N} days before {PROC}.
Pt was instructed to titrate {MED} up by {DOSE} weekly as tolerated.
She notes new {COND} after recent {PROC} at {HOSP}.
Reports being compliant with {MED} and {MED}, uses a pillbox.
{COND} - ongoing, managed by specialist, no changes per patient.
Recent ED visit for {COND}; treated with {MED} {ROUTE} and discharged.
Will hold off on imaging; if no improvement in {N} weeks, order {TEST}.
{ANAT} exam deferred per patient preference.
Pt tearful when discussing {COND}; provided resources and referral to counseling.
Started {MED} {DOSE}; pt educated on signs of {COND} to watch for.
{MED} {DOSE} was initiated on {DATE} and has been well tolerated since.
Neuro: A&O x3, gait steady, {ANAT} sensation intact.
He describes {COND} as "like a band" around the {ANAT}.
{TEST} pending; will call pt at {PHONE} with results.
Pt reports good relief from {PROC} performed {N} months ago.
Discussed that {COND} is chronic and goal is symptom control, not cure.
Mild {COND} likely from {MED}; reassured, no change.
Patient {LAST} was seen for pre-op clearance prior to {PROC} on {DATE}.
Cardiopulmonary exam benign; {TEST} reviewed, {RESULT}.
Patient counseled: limit salt, take {MED} at the same time {FREQ=daily}, monitor for {COND}.
{COND} flare in {DATE}, required {MED} burst, none since.
Recommend {MED} {DOSE} {ROUTE} {FREQ=once} and repeat at {N} months.
Pt is a {AGE} y/o with {COND} who is establishing care after moving from {STATE}.
{TEST} trend: {RESULT} to {RESULT} over the past year.
Risks of {MED} including {COND} and {COND} reviewed; consent obtained.
Patient requests note for work due to {COND}; provided for {N} days.
Will <continue|stop|reduce> {MED} and reassess at next visit.
He stopped {MED} on his own {N} weeks ago because of {COND}.
Her {COND} is managed with {MED} {DOSE} {FREQ} and diet.
{ANAT}: PERRL, EOMI. {ANAT}: clear b/l.
Patient reports using {MED} {DOSE} {FREQ}, more than prescribed.
Care coordinated with {NAME} at {HOSP}; records faxed to {FAX}.
Home health to assist with {MED} {ROUTE} administration {FREQ}.
Mild {COND} on exam, otherwise well.
{COND} screening up to date; {PROC} completed {DATE}.
Pt asked about stopping {MED}; advised against abrupt discontinuation.
Joint exam: {COND=synovitis} of {ANAT} and {ANAT}, no {COND=deformity}.
Since our last visit on {DATE}, she has had {N} ED visits for {COND}.
Will add {MED} {DOSE} {FREQ=at bedtime} for {COND}; hold if sedated.
{TEST}: {RESULT}. Interpretation: <normal|borderline|abnormal>.
He reports {COND} started suddenly at {TIME} while at rest.
Diet: eats out {N} times a week; counseled on portion sizes.
Plan of care for {COND} reviewed with pt; pt verbalized understanding and agrees.
Presents for evaluation of a {COND=lump} on the {ANAT}, present for {N} months.
{MED} dose unchanged at {DOSE}; {TEST} at goal.
No improvement with {MED}; will escalate to {MED} {DOSE} {ROUTE} {FREQ}.
Clinically, findings most consistent with {COND} of the {ANAT}.
Pt given sample of {MED} {DOSE}, instructed to use {FREQ}.
Patient's wife reports he has been more confused since starting {MED}.
Psych: mood <euthymic|anxious|depressed>, affect congruent, {COND} denied.
Patient is up to date on vaccines except {MED}, which was given today {ROUTE}.
Discussed {PROC} vs. conservative management; pt prefers to wait.
{TEST} ordered to evaluate for {COND}; results to patient portal.
She is a {AGE}-year-old G{N}P{N} presenting with {COND}.
Rx: {MED} {DOSE} {ROUTE} {FREQ}, #30, {N} refills.
Last dose of {MED} was taken at {TIME} this morning.
Pt has {COND} in the {ANAT} that is <improving|unchanged|spreading>.
Continue current management of {COND}; next {TEST} due {DATE}.
Reports no {COND} since the switch from {MED} to {MED}.
Caregiver {FIRST} can be reached at {PHONE} for questions about meds.
Interval hx: {COND} <better|worse|same>; taking {MED} {DOSE} as directed.
[x] {COND} reviewed  [x] meds reconciled  [ ] {TEST} due
Pt walked in asking whether {MED} could be causing her {COND}; discussed, unlikely.
Shared decision-making re: {PROC}; pt will call {HOSP} to schedule.
Sx began {DATE}, initially mild {COND}, now with {COND} in the {ANAT}.
Labs deferred; {TEST} {RESULT} last year, pt fasting today: <yes|no>.
Pt presented to the ED with {N} days of worsening {COND} and was found to have {TEST} of {RESULT}.
On arrival, {TEST} was {RESULT} and {TEST} was {RESULT}; {MED} {DOSE} {ROUTE} was given in triage.
She was admitted to the medicine service for management of {COND} complicated by {COND}.
Hospital course was notable for {COND}, which resolved after {MED} was started at {DOSE} {FREQ}.
The patient underwent {PROC} on {DATE} without immediate complications.
Under {PROC=general anesthesia}, the {ANAT} was prepped and draped in the usual sterile fashion.
Estimated blood loss was minimal; the {ANAT} was irrigated and closed in layers.
Postoperatively she was transferred to the PACU in stable condition and received {MED} {DOSE} {ROUTE} for {COND=pain}.
{TEST} demonstrated {RESULT}, consistent with {COND} involving the {ANAT}.
No acute abnormality of the {ANAT}; mild {COND=degenerative change} of the {ANAT} is again noted.
Findings are concerning for {COND}; correlation with {TEST} is recommended.
Cardiology was consulted for {COND} and recommended {MED} {DOSE} {ROUTE} {FREQ}.
Oncology saw the patient and felt that {PROC} should be deferred until {COND} improves.
Per neurology, {TEST} should be repeated in {N} hours and {MED} held in the meantime.
Overnight the pt became {COND} and received {MED} {DOSE} {ROUTE}.
RN notified covering MD at {TIME} regarding {TEST} of {RESULT}; orders received to recheck in {N} hours.
Pt resting comfortably, denies {COND}, tolerating diet, {ANAT} dressing clean, dry and intact.
Family at bedside; daughter {FIRST} updated on plan of care by phone at {PHONE}.
He was transitioned from {ROUTE} {MED} to {MED} {DOSE} {ROUTE} on hospital day {N}.
{MED} was discontinued due to {COND} and replaced with {MED}.
Given concern for {COND}, {TEST} was obtained and returned {RESULT}.
Surgery was consulted for possible {PROC}, but the patient was deemed a poor operative candidate.
After discussion with {NAME}, the family elected to pursue comfort-focused care.
The {ANAT} was <incised|opened|explored> and a large amount of {COND=purulent fluid} was evacuated.
Specimen sent to pathology, which returned {COND} with margins <negative|close|positive>.
Sections of the {ANAT} show {COND} without evidence of {COND=malignancy}.
The patient was intubated in the ED for {COND} and admitted to the ICU on {MED} at {DOSE}.
Sedation was weaned on day {N} and she was extubated to {DOSE} of {MED}.
Repeat {TEST} on {DATE} showed interval improvement of {COND}.
{TEST} trended from {RESULT} on admission to {RESULT} at discharge.
Pt was seen and examined at bedside with the resident; I agree with the plan for {COND} as documented.
She endorses {COND} radiating to the {ANAT}, worse with exertion and relieved by rest.
Exam was significant for {COND} of the {ANAT} and {COND=decreased sensation} over the {ANAT}.
{PROC} was performed at the bedside under {TEST} guidance; {DOSE} of fluid was removed.
Fluid studies were sent and {TEST} came back at {RESULT}.
{TEST} <grew|remained negative for> {COND} and she completed {N} days of {ROUTE} {MED}.
ID was consulted and recommended narrowing to {MED} {DOSE} {ROUTE} {FREQ} for a total of {N} weeks.
{PROC} was performed in the {ANAT} for long-term antibiotics.
He was noted to have {COND} on the monitor at {TIME} and was bolused with {MED} {DOSE}.
{MED} drip titrated to maintain {TEST} above {RESULT}.
Ms. {LAST} is a pleasant {AGE} year old admitted on {DATE} with {COND}.
Mr. {LAST} was brought in by EMS after being found down at home with {COND}.
Per EMS, he received {MED} {DOSE} {ROUTE} en route with partial response.
Home meds were held on admission except {MED} and {MED}.
Her {MED} was increased to {DOSE} {FREQ} for better control of {COND}.
Discharged home on {MED} {DOSE} {ROUTE} {FREQ} with follow-up at {HOSP} in {N} weeks.
The procedure was explained and informed consent was obtained from the patient and her son {NAME}.
Time-out performed; correct patient, site ({ANAT}) and procedure confirmed.
{PROC=Local anesthesia} with {MED} {DOSE} was achieved and a needle advanced into the {ANAT}.
A {N} French catheter was advanced over the wire and sutured in place.
There is a {RESULT} lesion in the {ANAT}, likely representing {COND}.
Impression: {N}. {COND}. {N}. No evidence of {COND}.
Compared with the prior study from {DATE}, the {ANAT} opacity has <increased|decreased|not changed>.
Lines and tubes: endotracheal tube terminates {RESULT} above the {ANAT}.
The {ANAT} is unremarkable, and there is no {COND=free fluid} in the {ANAT}.
Gross description: received fresh labeled with the patient's name and {MRN} is a portion of {ANAT}.
Final diagnosis: {ANAT}, {PROC}: {COND}.
Immunostains are positive for {TEST} and negative for {TEST}, supporting {COND}.
{COND} was managed conservatively with {PROC=bowel rest} and {ROUTE} fluids.
She was made NPO for {PROC} and {MED} was held the night prior.
Anticoagulation with {MED} was resumed {N} hours after the procedure.
The patient tolerated {PROC} well and there were no complications; {TEST} afterward was {RESULT}.
Nursing reports pt pulled out IV at {TIME}; new access obtained in the {ANAT}.
{COND=Pain} controlled with {MED} {DOSE} {ROUTE} {FREQ} prn, rated {N}/10 this morning.
Fall precautions maintained; bed alarm on; pt reoriented x{N} overnight.
Foley removed at {TIME} and pt voided spontaneously by afternoon.
Strict I/O; {TEST} this AM {RESULT}, {TEST} adequate.
Neuro checks q{N}h unchanged; {ANAT} equal and reactive, moving all {ANAT=extremities}.
{TEST} at {TIME} was {RESULT}; {MED} sliding scale per protocol.
Condition at discharge: stable. Disposition: home with {COND} education provided.
In the ED, vitals notable for {TEST} {RESULT} and {TEST} {RESULT}.
He was given {MED} {DOSE} and {MED} {DOSE} {ROUTE} with improvement in symptoms.
Bedside {TEST} of the {ANAT} showed {COND}, and surgery was called emergently.
She was taken to the OR for emergent {PROC}, where {COND} was identified.
Operative findings: {COND} of the {ANAT} with surrounding {COND=inflammation}; no {COND}.
Procedure: {PROC}. Surgeon: Dr. {LAST}. Assistant: Dr. {LAST}. Anesthesia: general.
Drains: one {N} French drain placed in the {ANAT}.
Complications: none. Specimens: {ANAT} to pathology.
The {ANAT} was identified and carefully dissected free from the surrounding tissue.
Hemostasis was achieved, the {ANAT} was closed with <staples|running suture|interrupted sutures>, and {MED} was applied.
Admitted under the care of Dr. {NAME} at {HOSP}; PCP notified.
Reason for consult: {COND} in a patient with known {COND}.
Recommend {TEST} and, if {RESULT}, start {MED} {DOSE} {FREQ}.
We will continue to follow; please page with questions at {PHONE}.
Thank you for this interesting consult; recommendations regarding {COND} discussed with the primary team.
Patient was initially started on {MED} but developed {COND}, so this was stopped on {DATE}.
For her {COND}, we continued home {MED} {DOSE} and added {MED}.
The {TEST} was <markedly|mildly|slightly> elevated at {RESULT}, prompting further workup.
{TEST} was without evidence of {COND} in the {ANAT}.
{TEST} showed {TEST} of {RESULT} with moderate {COND}.
Cath lab was activated and {PROC} of the {ANAT} was performed with {PROC}.
Post-cath, access site at the {ANAT} was soft without {COND}.
He was loaded with {MED} {DOSE} and started on {MED} {DOSE} {FREQ}.
{MED} was administered at {TIME} after {TEST} excluded {COND}.
She developed {COND} on post-op day {N} and was treated with {MED}.
{PROC} was complicated by {COND}, requiring return to the OR on {DATE}.
Pt is POD {N} s/p {PROC}, ambulating in halls with {PROC=PT}, passing flatus.
Incision over the {ANAT} is clean, dry, and intact without {COND} or {COND=drainage}.
Diet advanced as tolerated; {MED} switched to {ROUTE} on day {N}.
Labs this morning notable for {TEST} {RESULT}, {TEST} {RESULT}, otherwise unremarkable.
{N} units of {MED} were transfused for {TEST} of {RESULT} with appropriate response.
{TEST} sent; consent for blood products signed by the patient on {DATE}.
Rapid response called at {TIME} for {COND}; pt transferred to the ICU.
Code blue called; ROSC achieved after {N} rounds of {PROC=compressions} and {MED} {DOSE} {ROUTE}.
Goals of care discussed with husband {FIRST} {LAST}, who confirmed DNR/DNI status.
Palliative care consulted for symptom management of {COND}; started {MED} {DOSE} {FREQ}.
She was discharged to a skilled nursing facility at {ADDRESS}, {CITY}, {STATE}.
Case management arranged home health; agency contact {PHONE}, fax {FAX}.
Outside records from {HOSP} were reviewed and showed prior {PROC} in {DATE}.
Transfer accepted from {HOSP} for higher level of care regarding {COND}.
Patient is a poor historian; collateral obtained from his sister, {NAME}.
He admits to drinking {N} drinks daily and was started on {MED} per withdrawal protocol.
{MED} {DOSE} {ROUTE} {FREQ} was given for {COND=withdrawal}, with last dose at {TIME}.
Psychiatry evaluated for {COND} and recommended {MED} {DOSE} {FREQ=at bedtime}.
On exam the {ANAT} was <tender|distended|firm> with {COND=guarding} in the {ANAT}.
There was no {COND=rebound}, and the {ANAT} was soft in the remaining quadrants.
{ANAT} examination revealed {COND} without {COND}.
Breath sounds diminished at the {ANAT} with {COND} on exam.
Her {COND} was attributed to {MED}, which was therefore held.
Allergy to {MED} (reaction: {COND}) was confirmed with the patient.
{MED} level checked and was {RESULT}; dose adjusted to {DOSE} {FREQ}.
Renal was consulted for {COND} with {TEST} rising to {RESULT}.
Heme/onc recommended {PROC} of the {ANAT} to establish a tissue diagnosis.
{PROC=Biopsy} of the {ANAT} returned {COND}, and staging {TEST} was ordered.
She received cycle {N} of {MED} {DOSE} {ROUTE} and tolerated it without reaction.
Isolation precautions in place; {TEST} {RESULT} this morning.
GI performed {PROC} showing {COND} in the {ANAT}, which was treated with clips.
{COND=Bleeding} resolved after {MED} {DOSE} {ROUTE} bolus followed by infusion.
He was kept on {MED} {FREQ} and monitored for recurrent {COND}.
{TEST} was obtained, and the read by Dr. {LAST} was {RESULT}.
{TEST} of the {ANAT} was limited by motion but no {COND} was seen.
There is mild {COND} at the {ANAT}, unchanged from {DATE}.
Electronically signed by {NAME}, MD on {DATE} at {TIME}.
Dictated but not read; patient {MRN}, account {ACCT}.
Ortho evaluated and placed the {ANAT} in a splint; {PROC} planned as outpatient.
{TEST} of the {ANAT} showed {COND} with mild displacement.
Neurovascularly intact distally; {TEST=capillary refill} less than {N} seconds in the {ANAT}.
Vascular surgery was consulted for a cool, pulseless {ANAT} and {MED} infusion was started.
{PROC} was completed through a {ANAT} approach without difficulty.
The patient remained on {MED} at {DOSE} per hour, titrated to goal {TEST} of {RESULT}.
{TEST} grew {COND}, and antibiotics were tailored accordingly.
Pt reported {COND} after the first dose of {MED}; reaction resolved with {MED} {DOSE}.
{COND} and {COND} were felt to be chronic and were managed with home regimen.
Her course was otherwise uncomplicated and she was discharged on hospital day {N}.
Pending at discharge: final {TEST} and pathology from {PROC}.
Please follow up {TEST} in {N} days with your PCP, Dr. {LAST}, at {PHONE}.
Return precautions reviewed, including worsening {COND}, {COND}, or inability to tolerate {MED}.
Interpreter used for all discussions; patient's preferred contact is {EMAIL}.
The wound at the {ANAT} was packed with gauze and will require daily {PROC=dressing changes}.
{PROC} site at the {ANAT} checked q{N}h; no {COND=bleeding} noted.
{ANAT} drain output {DOSE} over the last shift; serous, no {COND=air leak}.
{MED} {DOSE} {ROUTE} given at {TIME} for {COND} with good effect.
Pt c/o {COND} overnight; {MED} given and reassessed at {TIME} with relief.
Vent settings unchanged; {TEST} {RESULT} on the morning gas.
Sedated on {MED} at {DOSE}, {TEST} {RESULT}; daily awakening trial planned.
Proned for {N} hours overnight with improvement of {TEST} to {RESULT}.
Pressors weaned off by {TIME}; {MED} remains at {DOSE} for {COND}.
Tube feeds held for {PROC}; resumed at {DOSE} per hour afterward.
Mother, {NAME}, visited and asked to be called at {PHONE} with any changes.
She was found to be {COND} and a {TEST} was sent, which was {RESULT}.
Differential diagnosis includes {COND}, {COND}, and less likely {COND}.
Low suspicion for {COND} given normal {TEST}; will not anticoagulate.
Workup for {COND} including {TEST} and {TEST} was unrevealing.
Admission {TEST} was {RESULT}; repeat at {N} hours was {RESULT}.
We discussed the risks of {PROC}, including {COND=bleeding}, {COND=infection} and {COND}, and the patient wishes to proceed.
Patient {FIRST} {LAST} (DOB {DATE}, MRN {MRN}) was admitted via the ED.
Dr. {LAST} from cardiology recommended holding {MED} until the {TEST} normalizes.
He has a remote history of {PROC} of the {ANAT} at {HOSP} in {DATE}.
{COND} was noted incidentally on {TEST} and will need outpatient follow-up.
Attempted {PROC} at the {ANAT} x{N} unsuccessfully; IR consulted.
IR placed a {PROC} catheter into the {ANAT} under fluoroscopy.
The {ANAT} appears <dilated|thickened|normal in caliber>, without surrounding {COND=stranding}.
No focal {COND}, {COND}, or {COND}; {ANAT} size within normal limits.
Mild {COND} involving the {ANAT}, likely chronic.
{MED} {DOSE} {FREQ} was restarted once {TEST} returned to {RESULT}.
The patient was counseled on smoking cessation and started on {MED} {DOSE} {ROUTE}.
{AGE} y/o F G{N}P{N} admitted at {N} weeks for {COND}.
L&D: {MED} {DOSE} {ROUTE} given for {COND}; {TEST} reassuring.
Newborn transferred to NICU for {COND}; mother updated by the team.
Peds admit: {AGE} yo with {COND}, tolerating {ROUTE} rehydration, {N} wet diapers today.
Weight-based {MED} {DOSE} {ROUTE} {FREQ} started; parents at bedside.
Trauma activation at {TIME}: restrained driver with {COND} of the {ANAT}.
Primary survey intact; secondary survey notable for {COND} over the {ANAT}.
{TEST} negative; {TEST} of the {ANAT} ordered.
{MED} booster updated; {COND} of the {ANAT} repaired with {N} sutures.
Wound irrigated with {DOSE} of {MED} before closure.
Sutures to be removed in {N} days at {HOSP} urgent care.
Pt left AMA at {TIME} after risks, including {COND}, were explained.
Discharge summary faxed to PCP office at {FAX} on {DATE}.
Consult note: {AGE} yo s/p {PROC} on {DATE}, now with {COND} at the {ANAT}; recommend {TEST} and hold {MED}.
{TEST} stable overnight at {RESULT} | {MED} held | plan {PROC} tomorrow if {TEST} remains normal.
OT eval: pt requires min assist for LB dressing secondary to {COND} of the {ANAT}.
Pt reports {COND=pain} 6/10 in {ANAT} after {PROC}, relieved partially by {MED} {DOSE} {FREQ}.
Pt is a {AGE} yo G{N}P{N} at 32 weeks presenting for routine prenatal visit.
She denies {COND=vaginal bleeding} or {COND=leakage of fluid}, reports good fetal movement, no {COND}.
Started on {MED} {DOSE} {ROUTE} {FREQ} for {COND} in pregnancy, will recheck {TEST} in {N} weeks.
Mom states child has had {COND} for the past {N} days with {COND=decreased PO intake}.
Immunizations up to date per mom; due for {MED} at next well visit.
{AGE} mo here for WCC, growing along 50th percentile, {TEST} {RESULT}.
Derm: scattered {COND=erythematous papules} over {ANAT}, no {COND=vesicles}, c/w {COND}.
Plan {PROC} of {COND=lesion} on {ANAT}, sent to path; pt to apply {MED} {FREQ} to site.
{COND=Hyperpigmented macule} on the {ANAT} measuring 6 mm, irregular borders, {TEST=dermoscopy} concerning for {COND}.
{TEST} OD {RESULT}, OS {RESULT}; pt wearing correction.
Dilated exam shows {COND} of the {ANAT}, no {COND} seen.
Pt instructed to instill {MED} {DOSE} in the affected {ANAT=eye} {FREQ} and return in {N} weeks.
Dental: pt presents w/ {COND=pain} at {ANAT}, percussion positive, films c/w {COND}.
{PROC} performed on {ANAT} under local w/ {MED} {DOSE}, pt tolerated without complication.
Pharmacy consult requested for {MED} dosing in setting of {COND}.
Recommend adjusting {MED} to {DOSE} {ROUTE} {FREQ} based on {TEST} of {RESULT}.
Pharmacist reviewed med list; noted duplication of {MED} and {MED}, prescriber notified.
Per pharmacy, trough {TEST} {RESULT}, will hold next dose and recheck in AM.
This visit was conducted via telehealth with pt at home in {CITY}; consent obtained verbally.
Video visit: pt appears comfortable, speaking full sentences, reports {COND} improving since starting {MED}.
Telephone f/u w/ pt re: {TEST} results, {RESULT}, pt verbalized understanding.
Home health RN visit: pt found sitting in recliner, {ANAT} dressing clean, dry and intact.
Per nursing staff, pt refused {MED} x{N} doses this week.
Pt's daughter {FIRST} called at {PHONE} asking about changes to {MED}.
Psych: pt presents with {COND=low mood}, {COND=poor sleep}, {COND} x{N} weeks.
Denies {COND=SI}/{COND=HI}, no {COND=AVH}, lives with spouse, hx of {COND} in remission.
MSE: alert, oriented x3, affect <constricted|flat|labile>, thought process linear, insight fair, no evidence of {COND}.
Pt endorses {COND} {N} times per week, uses {MED} {DOSE} {FREQ=prn} with relief.
Hx of {COND} and {COND}, currently stable on {MED} and {MED}.
Behavioral health f/u: pt engaged in weekly therapy, reports fewer episodes of {COND}.
Dictation begins. This is Dr. {LAST} dictating on patient {NAME}, medical record number {MRN}.
The patient is a {AGE}-year-old period who comes in today comma complaining of {COND} period.
Exam of the {ANAT} new paragraph reveals mild {COND=tenderness}, no {COND=erythema}.
End of dictation. Dictated but not read, {DATE}.
Patient was seen at {TIME} in clinic for {COND}, comma, and was given {MED} {DOSE}.
Pt s/p {PROC} on {DATE}, doing well, incision healing, no signs of {COND=infection}.
Strength 4/5 {ANAT}, 5/5 {ANAT}, sensation intact to light touch throughout.
Pt able to perform sit-to-stand x{N} without {ANAT=UE} support, improved from last week.
Balance: {TEST} {RESULT}, indicating moderate fall risk.
Recommend continued skilled {PROC=PT} {N}x/week for {N} weeks to address deficits related to {COND}.
Pt limited by {COND}, session ended early at pt request.
Hx obtained from pt and caregiver; pt is a poor historian due to {COND}.
Vitals stable, afebrile, {TEST} {RESULT}, {TEST} {RESULT}.
Postpartum day {N}, pt ambulating, voiding, tolerating regular diet, {COND=pain} controlled w/ {MED}.
Lochia moderate, {ANAT=fundus} firm at {ANAT}, incision clean.
Breastfeeding going well per mom, infant latching; mom reports <mild|no> {COND}.
{TEST} status {RESULT}, pt received {MED} {DOSE} {ROUTE} in labor.
Child brought in by father for ear pulling and fussiness; {ANAT} erythematous and bulging, dx {COND}.
Rx: {MED} {DOSE} {ROUTE} {FREQ} x{N} days, return if no improvement in 48 hours.
Developmental milestones appropriate for age; speaks in short phrases, walks independently, {TEST} {RESULT}.
Pt w/ longstanding {COND} on {ANAT}, failed {MED}, now starting {MED} {DOSE} {FREQ}.
{PROC=Biopsy} from {ANAT} returned {RESULT} for {COND}; discussed w/ pt by phone.
{TEST} {RESULT} OU on {MED}; pt reports good adherence.
S/p {PROC} OS on {DATE}, doing well, using {MED} {FREQ} as directed.
Oral exam: {ANAT} with generalized {COND=inflammation}, {COND=bleeding on probing}, {COND=calculus} present.
Pt advised to rinse with {MED} {FREQ} and return for {PROC} in {N} weeks.
{COND=Caries} noted at {ANAT}; patient elects {PROC} at next appointment.
Premedicated with {MED} {DOSE} {ROUTE} 1 hr prior due to hx of {COND}.
Renal function: {TEST} {RESULT}, recommend dose reduction of {MED} to {DOSE} {FREQ}.
Pharmacy recommends switching {MED} to {ROUTE} route once tolerating diet.
Interaction identified between {MED} and {MED}; consider alternative agent.
Anticoag clinic: {TEST} {RESULT}, continue {MED} {DOSE} {FREQ=daily}, recheck in {N} weeks.
Pt missed {N} doses of {MED} last week, reeducated on importance of adherence.
Pt reports onset of {COND} {N} days ago, worse at night, no relief with OTC remedies.
Unable to perform full exam via telehealth; pt instructed to present to ED if {COND} worsens.
Plan discussed; prescription for {MED} sent to {PHARM}.
Visiting nurse notes pt's {TEST=sugars} ranging 180s to 250s, {TEST} last {RESULT}.
Med reconciliation completed in home, pt has expired bottle of {MED}, discarded w/ permission.
Pt lives alone, son {FIRST} {LAST} visits daily, contact {PHONE}.
Fall reported by facility staff at {TIME}, pt found on floor next to bed, no {COND=LOC}.
Post-fall assessment: {ANAT} bruising, full ROM, no {COND=deformity}, {TEST} ordered to r/o {COND=fracture}.
Nursing home resident with advanced {COND}, DNR on file, comfort focused care.
Pt reports using alcohol daily, approximately {N} drinks, last drink yesterday evening, hx of {COND}.
{TEST} {RESULT}, started on {MED} {DOSE} {ROUTE} per protocol.
Family meeting held with pt, wife, and Dr. {LAST}; goals of care reviewed.
Pt tolerated session without adverse events; {TEST} pre and post within normal limits.
Pt demonstrates {COND=decreased grip strength} on affected side, {TEST} {RESULT}.
Fine motor: difficulty buttoning and manipulating small objects due to {COND} of the {ANAT}.
Cognition screened; {TEST} {RESULT}, recommend further neuropsych eval.
Pt reports {COND} since MVA on {DATE}, worsening with prolonged sitting.
{PROC=Manual therapy} to {ANAT} followed by {PROC=therapeutic exercise} x30 min.
{ANAT} ROM limited in flexion by 50%, positive {TEST=straight leg raise} on the {ANAT}.
Pt states {MED} makes him drowsy, requests alternative.
Pt presents for {PROC}, consent signed, timeout performed.
{TEST} today shows single IUP, {TEST} {RESULT}, consistent with dates.
Pt at {N} weeks with hx of {COND} in prior pregnancy; plan {MED} {DOSE} {FREQ=daily} starting now.
{TEST=Rh} {RESULT}, {MED} given {ROUTE} today.
Infant w/ {COND}, {TEST} at {N} hrs of life {RESULT}, below treatment threshold.
Teen seen alone for part of visit; psychosocial screen completed, denies {COND}.
Pt w/ hx of {COND}, uses {MED} {DOSE} {FREQ} and rescue inhaler {FREQ=prn}, last flare {N} months ago.
Referral placed to allergy; {MED} {DOSE} autoinjector prescribed, school form completed.
{COND=Lesion} on {ANAT} treated with {PROC} x{N} cycles, pt tolerated well.
Nail changes on {ANAT}, {TEST} {RESULT}, will start {MED} {DOSE} {ROUTE=PO} {FREQ=daily} x12 weeks.
Baseline {TEST} {RESULT} prior to initiating therapy.
Pt reports {COND=blurry vision} {ANAT} x{N} months, worse when reading.
Fundus exam: {TEST} 0.6, no {COND=hemorrhages}, {ANAT} flat.
{TEST} showed {RESULT}, consistent with {COND}, pt counseled.
{ANAT=Tooth} #{N} with deep {COND=caries} extending to {ANAT=pulp}, recommend {PROC}.
Pt anxious about dental work, given {MED} {DOSE} {ROUTE} 30 min before procedure.
Soft tissue: {ANAT} with small {COND=ulcer}, nontender, will monitor.
PK note: {TEST} {RESULT}, below goal, increase {MED} to {DOSE} {FREQ}.
Pharmacist counseled pt on {MED}, side effects including {COND}, and need for monitoring.
Recommend discontinuing {MED} given {COND} and fall risk.
Pt seen by video; states {COND} has resolved after course of {MED}.
Virtual visit limited by poor connection; pt completed visit by phone at {PHONE}.
Patient's wife assisted with camera positioning to show {ANAT}.
HHA visit: pt bathed, ambulated in home w/ cane, tolerating meals, {COND} unchanged.
Wound on {ANAT} measures 3 x 2 cm, depth 0.5 cm, moderate {COND=serous drainage}.
Dressing changed per order, {MED} applied to wound bed, covered with foam dressing.
Pt taking {MED} and {MED} from pill organizer, set up weekly by daughter.
Resident seen in SNF for routine monthly visit, no acute issues per staff, {COND} stable.
Hx of {COND} w/ {COND=behavioral disturbances}, staff managing with redirection.
{COND} on {ANAT}, turning schedule q2h reinforced with CNAs.
Pt tearful during session, reports grief related to recent loss of spouse, meets criteria for {COND}.
Sleep: pt reports {N} hrs/night, frequent awakenings, started {MED} {DOSE} {FREQ=qHS}.
Pt agreeable to increasing {MED} to {DOSE}; risks and benefits discussed.
Pt w/ {COND}, believes neighbors are watching him, poor insight.
Collateral obtained from pt's sister {FIRST} by phone.
Pt admitted voluntarily for {COND}, placed on q15 min checks.
No side effects reported from {MED}; {TEST} {RESULT} within normal limits.
Pt reports cravings decreased since starting {MED} {DOSE} {ROUTE=SL} {FREQ=daily}.
Dictated by {NAME}, transcribed {DATE}, patient {NAME}, DOB {DATE}.
Patient has a history of quote unquote {COND}, unquote, per her report.
Medications include {MED} {DOSE} {FREQ} comma {MED} {DOSE} {FREQ} period.
The {ANAT} was examined and found to be scratch that, the {ANAT} was normal.
[inaudible] reports improvement in {COND} since starting {MED}.
Pt able to climb {N} stairs with rail and SBA, mild {COND} at top.
Goals: pt will be independent with HEP and ambulate 300 ft w/o AD within {N} weeks.
Pt reports decreased {COND=pain} after {PROC} to {ANAT} last week.
Pt presents w/ {COND} following {PROC} on {DATE}.
{PROC=E-stim} applied to {ANAT} at 80 Hz for 15 minutes.
Contractions q{N} min, {ANAT} 4/90/-1, membranes intact.
Pt requesting {PROC}; anesthesia notified, {MED} {DOSE} given {ROUTE} for comfort.
{TEST} reactive, {N} accels in 20 min, no decels.
{PROC} done today; {TEST} {RESULT} last year.
Contraception counseling provided; pt elects {MED}.
Child seen for f/u of {COND}, improving w/ {MED}, no new complaints.
Pt w/ {COND}, school reports {COND=difficulty focusing}; started {MED} {DOSE} {FREQ=qAM}.
Pt using {MED} {ROUTE} {FREQ} for {COND} with partial response.
Eyes: {ANAT=lids} normal, {ANAT} clear, {TEST} {RESULT}.
{COND=Sinus tract} noted at {ANAT}, pt advised {PROC} vs {PROC=extraction}.
Pharmacy to follow for {MED} levels, next {TEST} due at {TIME}.
Pt educated on proper {MED} inhaler technique, demonstrated correctly.
Telehealth f/u with {NAME}, pt reports side effects from {MED}, including {COND}.
Pt able to show {ANAT} on camera; appears erythematous without {COND=drainage}.
Home safety evaluation completed for pt w/ {COND}; recommend grab bars and shower chair.
Pt's {TEST=BP} in home {RESULT}, taking {MED} {DOSE} {FREQ=daily} as prescribed.
Facility reports pt had {TEST=temp} of {RESULT} overnight, {TEST} ordered.
Pt w/ worsening {COND}, hospice referral discussed with family.
Pt reports mood <improved|unchanged|worse> since last visit, sleep <better|poor>, {COND} <resolved|persists>.
Pt's case manager {FIRST} can be reached at {PHONE} or {EMAIL}.
Insurance {ACCT} requires prior auth for {MED}, forms submitted.
Rx transmitted to {PHARM} at {ADDRESS}, {CITY} {ZIP}: {MED} {DOSE}, #30, {N} refills.
ORAL HYGIENE: fair. {COND=plaque} on {ANAT}. OHI given, pt to f/u {DATE}.
pt tol tx well. c/o {COND} post session, resolved w/ rest.
Per ObGyn note from {HOSP}, pt had {PROC} in {DATE} for {COND}.
Behavior: calm, cooperative, eye contact <good|poor|fleeting>, speech normal rate, no {COND}.
[x] {MED} {DOSE} given [ ] held, reason: {TEST} {RESULT}.
Pt's mother {NAME} ({PHONE}) consents to {PROC} for child.
{TEST=Wt} {RESULT}, {TEST=Ht} {RESULT}, {TEST} {RESULT}, {TEST=HC} 44 cm.
Per home health aide, pt c/o {COND} since {DATE}.
Teledermatology photos reviewed: {COND=annular plaque} on {ANAT} with central clearing, likely {COND}.
""".strip().splitlines()

# List items: problem and medication lists, surgical history, allergies, order sets,
# checkboxes, table-like rows.
LIST_ITEM_FOURTH = r"""
- {COND}, <chronic|stable|resolved|active|improving>
* {MED} {DOSE} <{FREQ=daily}|{FREQ=nightly}|{FREQ=twice daily}> for {COND}
[x] {COND}
( ) {PROC} <scheduled|pending|declined>
{PROC} — {DATE} — {HOSP}
{MED}    {DOSE}    {ROUTE}    {FREQ}    <active|held|discontinued>
{MED} | {DOSE} | {FREQ} | Refills: {N}
Allergy: {MED} — reaction: {COND} <(severe)|(mild)|(intolerance)|>
- s/p {PROC} {DATE}, <uncomplicated|c/b {COND}>
2. Hx of {COND} <in remission|controlled on meds|on surveillance>
{COND} (onset {DATE})
Start {MED} {DOSE} {ROUTE} now, then {FREQ}
<-|*|•> {MED} {DOSE} {FREQ=prn} {COND}
{COND} — followed by Dr. {LAST}
{MED} {DOSE} tab, take {N} tab(s) {ROUTE=by mouth} {FREQ}
Stop date: {DATE}   {MED} {DOSE} {FREQ}
[ ] Repeat {TEST} in {N} weeks
[x] {TEST} ordered — result {RESULT}
3. {COND} w/ {COND}
{ANAT} {COND}, <mild|moderate|severe>, <left|right> side
Rx: {MED} {DOSE} #{N} RF {N} — Dr. {NAME}
* {PROC} ({DATE}) for {COND}
{MED} {DOSE} {ROUTE} {FREQ=x1} <pre-op|in PACU|on arrival>
- {COND}: on {MED} {DOSE} {FREQ}
Problem: {COND} | Status: <Active|Inactive|Resolved> | Onset: {DATE}
{COND}, {COND}
{MED} — held since {DATE} d/t {COND}
(x) Notify MD if {TEST} <greater than|less than> {RESULT}
{DATE}    {PROC}    {ANAT}    Dr. {LAST}
4. {MED} {DOSE}/{DOSE} {ROUTE} {FREQ}
{COND} r/o {COND}
- {MED} <patch|cream|drops|inhaler> apply {ROUTE} {FREQ}
Indicated for {COND}: {MED}, {DOSE}, {N} day supply
{COND} <noted on|per> {TEST} {DATE}
{PROC} of {ANAT} <{DATE}|at age {AGE}|remote>
Home med: {MED} {DOSE} {FREQ} <— pt not taking|— confirmed w/ pharmacy|>
{MED} {DOSE} {ROUTE} q{N}h prn
5) {COND} <(primary)|(secondary)|(principal dx)>
[x] {MED} {DOSE} {ROUTE} on call to OR
( ) {MED} {DOSE} {ROUTE} {FREQ} <if needed|prn>
Allergies: {MED} (<reaction unknown|{COND}>), {MED} ({COND})
{COND} of {ANAT}, <s/p|awaiting> {PROC}
Discontinued: {MED} {DOSE} on {DATE} — reason: {COND}
- Family hx: {COND} <(mother)|(father)|(sibling)|(maternal grandmother)>
{TEST}: {RESULT} ({DATE})
{MED} {DOSE} — {COND} — Dr. {LAST} — started {DATE}
* {COND}, dx'd at age {AGE}
{MED} {DOSE} {ROUTE} {FREQ=weekly} on <Mondays|Fridays|Sundays>
{N}. {PROC} <at|@> {HOSP} <{DATE}|>
Diet: <NPO|clear liquids|cardiac> — hold {MED} until {TEST} reviewed
{COND} - well controlled on {MED}
{MED}, {MED}
[ ] Pt educated re: {MED} side effects
{COND} (ICD pending) — <new|established> problem
{PROC}, {ANAT} — {DATE}
{MED} {DOSE} {ROUTE=PO} <{FREQ=daily AM}|{FREQ=daily PM}|{FREQ=daily with meals}|{FREQ=daily at bedtime}>
- {MED} taper: {DOSE} x {N} days, then {DOSE} x {N} days
Surgical: {PROC} ({DATE}), {PROC} ({DATE})
{COND} <stable|worsening> — see {TEST} from {DATE}
Ordered: {TEST} <stat|routine|AM draw>
[x] {PROC} consent signed
{MED} {DOSE} {ROUTE} {FREQ} — Indication: {COND}
<Rt|Lt|B/L> {ANAT} {COND}
Adverse reaction: {MED} to {COND}
Intolerant of {MED} (GI), tolerates {MED}
{MED} {DOSE} {ROUTE=SL} {FREQ=q5min} x{N} {FREQ=prn} {COND}
- {COND} — resolved {DATE}
{MED} | {ROUTE} | {FREQ} | Start {DATE} | Stop {DATE}
6. {COND}, stage {N}
Pt reports taking {MED} {DOSE} <occasionally|most days|{FREQ=as needed}>
{COND}, followed at {HOSP}
* {PROC} w/ {PROC}, {DATE}
( ) {TEST} <prior to|before> {PROC}
{MED} {DOSE} in {MED} {DOSE} {ROUTE=IV} over {N} hr
Dx: {COND}; Tx: {MED}
{MED} {DOSE} every {N} weeks <{ROUTE=SC}|{ROUTE=IM}|{ROUTE=IV}>
{COND}   {DATE}   <Active|Resolved>
Hx {COND} s/p {PROC}
- {MED} ({MED}) {DOSE} {FREQ}
{MED} {DOSE} dispensed by {PHARM}, refills {N}
Primary: {COND}. Secondary: {COND}, {COND}
{COND} <— chronic, on meds|— new this admission|— incidental>
{MED} {DOSE} {ROUTE} {FREQ} x {N} days <then stop|then reassess>
[x] {TEST} <normal|abnormal> — {RESULT}
{PROC} <attempted, aborted|completed> {DATE}
{COND} affecting {ANAT} and {ANAT}
- No known drug allergies; intolerant of {MED}
{MED} {DOSE}: <continue|hold|resume> on discharge
{COND} (<self-reported|chart review|confirmed by imaging>)
{N}. {MED} {DOSE} {ROUTE} — <new|changed|unchanged>
{DATE} - {COND} - <ER visit|admitted|outpatient>
Sliding scale {MED} {ROUTE} per {TEST} {FREQ}
{MED} to {ANAT} {FREQ}
<Recurrent|Intermittent|Persistent> {COND} since {DATE}
Prescriber: Dr. {NAME}   Med: {MED} {DOSE}   Qty: {N}
* {COND} — {MED} and {MED}
{PROC} ({ANAT}) — complicated by {COND}
[ ] f/u {TEST} w/ PCP in {N} wks
Rx {MED} {DOSE} sent to {PHARM}
- {MED} {DOSE} {ROUTE} before {PROC}, hold after
Allergy to {MED}: reaction unknown, noted {DATE}
{COND}, <unspecified|not otherwise specified|provisional>
{TEST} {RESULT} — on {MED}
{MED} {DOSE} <chewable|ER|ODT|liquid> {FREQ}
7. {PROC} <x2|x3|twice>, last {DATE}
{ANAT} {PROC} by Dr. {LAST}, {HOSP}
{COND} <improving|unchanged> on {MED} {DOSE}
( ) Hold {MED} if {TEST} less than {RESULT}
{MED} {DOSE} {ROUTE} now and in {N} hours
<Suspected|Probable|Known> {COND}
PMH: {COND}, {COND}, {COND}
- {MED} {DOSE} {FREQ} (<OTC|herbal|Rx>)
{MED} level: {RESULT} on {DATE}
{COND} — last flare {DATE}
{MED} {DOSE} {ROUTE} {FREQ} · Refills: {N} · Last filled {DATE}
{COND=Contrast allergy} — premedicate w/ {MED} {DOSE} before {TEST}
{COND} of {ANAT} (<congenital|acquired|post-traumatic>)
* {MED} {DOSE} at {TIME} and {TIME}
{MED} drip titrate to {TEST} {RESULT}
[x] {COND} screening up to date — {TEST} {DATE}
{N}) {COND} with {ANAT} involvement
PSH: {PROC} {DATE}; {PROC} at age {AGE}
{MED} ({DOSE} {ROUTE}) — {COND}
{COND}   onset {DATE}   resolved {DATE}
Cont {MED} {DOSE} {FREQ}; d/c {MED}
{MED} inhaler {DOSE} {FREQ} and {FREQ=prn} {COND}
{PROC} — {ANAT} — <elective|urgent|emergent>
- Pt's own {MED} from home, {DOSE} {FREQ}
Vaccine: {MED} {DOSE} {ROUTE}, given {DATE}
{MED} {DOSE} {ROUTE=PO} <before food|fasting|with water> {FREQ}
{COND} — <no longer on|weaned off> {MED}
8. {COND} <complicated by|with> {COND}
Order set: {TEST}, {TEST}, {TEST}
{COND}, {ANAT}, <worse with activity|better with rest>
Infusion: {MED} {DOSE} over {N} min {FREQ}
Hx of {PROC} ({ANAT}) in {DATE}
[x] Reconciled {MED} {DOSE} w/ pt and {PHARM}
{MED} {DOSE} - {N} refills - exp {DATE}
{COND}: mgmt per Dr. {LAST}, {PHONE}
* {MED} {DOSE} {ROUTE} {FREQ} — since age {AGE}
Discharge dx: {COND}
{COND}; <rule out|eval for> {COND}
{MED} {DOSE} {ROUTE} {FREQ=once} <today|tonight|on {DATE}>
- {COND} managed by {HOSP} <clinic|specialty service>
Med: {MED}   Dose: {DOSE}   Route: {ROUTE}   Freq: {FREQ}
{COND} (<mild|severe>, {ANAT})
9. {MED} {DOSE} — pt unsure of frequency
Emergency contact for {COND} care plan: {NAME} {PHONE}
<[x]|[ ]> {PROC} recommended — pt <agrees|declines|undecided>
{MED} {DOSE} {ROUTE}, {MED} {DOSE} {ROUTE}
- {COND}, {ANAT} — {TEST} {RESULT} on {DATE}
Refill request: {MED} {DOSE} — {PHARM} {PHONE}
""".strip().splitlines()

# Result lines: labs, vitals, imaging, scores, panels, flags, trends.
LAB_FOURTH = r"""
{TEST} ..... {RESULT} (H)
{TEST} ........ {RESULT} <(L)|(H)|>
{TEST}   {RESULT}   <H|L|N|>   ref range per lab
{TEST} {RESULT} <critical|CRIT>, called to {NAME} at {TIME}
Critical value: {TEST} {RESULT}. Read back and verified by {NAME} at {TIME}.
{TEST} | {RESULT} | <flag: H|flag: L|normal>
{TEST}: {RESULT} (was {RESULT} on {DATE})
{TEST} trending <up|down|downward|upward>: {RESULT} to {RESULT} over {N} days
POC {TEST} {RESULT} at {TIME}
Point-of-care {TEST} <this am|at bedside|in triage>: {RESULT}
fingerstick {TEST} {RESULT} <pre-meal|before breakfast|at HS|fasting>
{TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}
{TEST} - {RESULT} - within normal limits
{TEST} remains elevated at {RESULT}, c/w known {COND}
{TEST} {RESULT} <on|while on> {MED}
Repeat {TEST} pending; initial {RESULT}
{TEST} collected {DATE} {TIME}: {RESULT}
Specimen: <serum|plasma|whole blood|urine|CSF>. {TEST} {RESULT}.
{TEST} (<random|fasting>): {RESULT}
Panel: {TEST} {RESULT} / {TEST} {RESULT} / {TEST} {RESULT} / {TEST} {RESULT}
{TEST} {RESULT} -- no prior for comparison
{TEST}: {RESULT}; interpreted by {NAME}
{TEST} {RESULT}   {DATE}   {HOSP} lab
Outside labs from {HOSP} ({DATE}): {TEST} {RESULT}, {TEST} {RESULT}
{TEST} <unremarkable|negative for acute findings>; {TEST} {RESULT}
Impression: {TEST} shows {COND} in the {ANAT}
{TEST} of {ANAT}: {RESULT}
{TEST} {ANAT}, {DATE}: no change from prior
{TEST}={RESULT} {TEST}={RESULT} {TEST}={RESULT}
[x] {TEST} {RESULT}   [ ] repeat in {N} weeks
( ) {TEST} drawn   (x) {TEST} {RESULT}
{TEST} <abnl|abnormal|ABNORMAL> {RESULT}
{TEST}: {RESULT} (ref {RESULT} to {RESULT})
{TEST} {RESULT} above upper limit of normal
{TEST} {RESULT}, slightly below reference range, likely hemolyzed
Comment: sample hemolyzed, {TEST} may be falsely elevated; recollect advised
{TEST} {RESULT} <^|up from {RESULT}|increased>
Baseline {TEST} {RESULT} before starting {MED}
{TEST} peak {RESULT} / trough {RESULT}
{MED} level {RESULT} drawn {TIME}, <therapeutic|subtherapeutic|supratherapeutic>
Last {TEST} {RESULT} on {DATE}, due again {DATE}
{TEST} not done - specimen <clotted|QNS|lost in transit>
{TEST} cancelled per {NAME}
{TEST} resulted {TIME}: {RESULT}. Dr {LAST} notified.
{TEST} {RESULT}; {TEST} {RESULT}; no acute changes
{TEST}/{TEST}: {RESULT}/{RESULT}
Vitals: {TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}
VS {TIME}: {TEST} {RESULT} | {TEST} {RESULT}
{TEST} on arrival {RESULT}, improved to {RESULT} after {MED}
{TEST} {RESULT} on room air
{TEST} {RESULT} on {DOSE} {MED}
{TEST} ordered by {NAME}; result {RESULT}
{TEST}, {TEST} within normal limits
{TEST}, {TEST}, {TEST}: all WNL
{TEST} {RESULT} (reflex {TEST} sent)
{TEST} reactive; confirmatory {TEST} {RESULT}
{TEST} <pos|neg|positive|negative|indeterminate>
{TEST} {RESULT} -- consistent with {COND}
{TEST} {RESULT}, argues against {COND}
{TEST} {RESULT}, not suggestive of {COND} at this time
Result comment: {TEST} {RESULT}. Clinical correlation recommended.
{TEST} prelim read: {RESULT}; final pending radiology
{TEST} final report ({NAME}, {DATE}): {RESULT}
{TEST} {DATE}: {COND} of {ANAT}, unchanged
{TEST} {ANAT} - no evidence of {COND}
{TEST} shows {RESULT} involving {ANAT}
{TEST}     {RESULT}     {RESULT}     {RESULT}
{TEST} x{N}: {RESULT}
{TEST} x {N} sets <no growth to date|NGTD|pending>
{TEST} ({ANAT}) {RESULT}; sensitivities to follow
Organism susceptible to {MED}, resistant to {MED}
{TEST} {RESULT} at {TIME}, {RESULT} at {TIME}
{TEST} q{N}h: {RESULT}, {RESULT}, {RESULT}
delta {TEST} {RESULT} over {N} hrs
{TEST} {RESULT}, {TEST} {RESULT} (both <stable|improved|worse>)
{TEST} normalised ({RESULT}) after stopping {MED}
{TEST} has doubled since {DATE} ({RESULT})
Prior {TEST} {RESULT} ({DATE}) vs today {RESULT}
{TEST}: {RESULT}  <flag H|flag L|>  <collected by RN|collected in clinic|>
{TEST} {RESULT}; pt {FIRST} informed by phone {PHONE}
{TEST} result {RESULT}, faxed to {FAX}
Labs reviewed w/ pt: {TEST} {RESULT}, {TEST} {RESULT}
{TEST} {RESULT}, {TEST} {RESULT} -- hold {MED} for now
{TEST} {RESULT}, {MED} dose adjusted to {DOSE} {FREQ}
{TEST} {RESULT} s/p {PROC}
post-{PROC} {TEST}: {RESULT}
{TEST} (pre-op) {RESULT}
{TEST} {RESULT} after {DOSE} {ROUTE} {MED}
{TEST} on admission: {RESULT}. {TEST} on discharge: {RESULT}.
{TEST} (<calc|derived|corrected>) = {RESULT}
Estimated {TEST} {RESULT}, stage per {COND} guidelines
{TEST} {RESULT}  --  {TEST} {RESULT}  --  {TEST} {RESULT}
{TEST}       {RESULT}      L
{TEST}.....{RESULT}.....<normal|high|low>
{TEST} neg x{N}
{TEST}: <detected|not detected|DETECTED>
{TEST} (swab, {TIME}): {RESULT}
{TEST} {RESULT}; {ANAT} sample sent to {HOSP}
Send-out {TEST} to reference lab, expected in {N} days
{TEST} still pending from {DATE}
{TEST} {RESULT}. MRN {MRN}. Accession {ACCT}.
{NAME} | {MRN} | {TEST} {RESULT} | {DATE}
{TEST} {RESULT} per {NAME}, {HOSP}
Scores: {TEST} {RESULT}, {TEST} {RESULT}
{TEST} {RESULT}/{N}
{TEST} total {RESULT} (subscale {RESULT})
pt reports home {TEST} readings around {RESULT}
{TEST} log: am {RESULT}, pm {RESULT}
Home {TEST} {RESULT} to {RESULT} per pt diary
{TEST} <WNL|wnl|nl>, {TEST} {RESULT}
{TEST} mildly <up|down> ({RESULT}), will recheck in {N} wks
{TEST} {RESULT} - borderline, repeat fasting
{TEST} {RESULT} (goal less than {RESULT})
{TEST} at goal: {RESULT}
{TEST} {RESULT} <H|HH|LL|L> -- paged covering MD {NAME}
** {TEST} {RESULT} ** PANIC VALUE
{TEST} {RESULT} (ABN) | {TEST} {RESULT} | {TEST} {RESULT} (ABN)
{TEST} result: {RESULT}, likely lab error, redraw ordered {TIME}
{TEST} in {ANAT} measured {RESULT}
{ANAT} {TEST}: {RESULT}, {COND} <suspected|not excluded|ruled out>
{TEST} {RESULT} in setting of {COND} and {MED} use
{TEST} (urine) {RESULT}, {TEST} (serum) {RESULT}
{TEST} {RESULT} {DATE} | {RESULT} {DATE} | {RESULT} {DATE}
{TEST} - see scanned report from {HOSP}
{TEST} reviewed by {NAME} on {DATE}, no action needed
{TEST}/{TEST}/{TEST} {RESULT}/{RESULT}/{RESULT}
""".strip().splitlines()

# Header lines: demographics, identifiers, encounter, care team, insurance.
HEADER_FOURTH = r"""
Patient: {NAME}   DOB: {DATE}   MRN: {MRN}
Pt Name: {LAST}, {FIRST}
DOB {DATE} ({AGE} yo)  Sex: <M|F|X|U>
MRN {MRN} | Acct # {ACCT} | Enc {ACCT}
Address: {ADDRESS}, {CITY}, {STATE} {ZIP}
Facility: {HOSP}
Adm Date: {DATE} {TIME}    Disch Date: {DATE}
Attending: {NAME}, <MD|DO>
PCP: {NAME}  ({PHONE})
Ref. Provider: Dr. {LAST}  Fax {FAX}
Attn: {NAME}, Medical Records
Insurance: policy {ACCT}, group {ACCT}
Subscriber: {NAME}   Subscriber ID: {ACCT}
SSN: {SSN}
Soc Sec #: {SSN}   DOB: {DATE}
Home ph: {PHONE} / Cell: {PHONE}
Emergency contact: {NAME} (<spouse|daughter|son|mother|father|sister|brother|friend>) {PHONE}
Preferred pharmacy: {PHARM}, {CITY}
Pharmacy: {PHARM}   Ph {PHONE}   Fax {FAX}
Portal: {URL}
Patient portal username: {EMAIL}
Visit date: {DATE}    Time in: {TIME}    Time out: {TIME}    CC: {COND}
Encounter #{ACCT} — {HOSP}
Chief complaint: {COND}
CC: {COND} x {N} <days|weeks|months>
ALLERGIES: {MED}, {MED}
NKDA  |  PCP {NAME}  |  Pharm {PHARM}
Procedure scheduled: {PROC} on {DATE} at {TIME}
Scheduled procedure: {PROC}  Surgeon: {NAME}
Referring dx: {COND}
Reason for referral: {COND} — referred by {NAME}, {HOSP}
Name | DOB | MRN: {NAME} | {DATE} | {MRN}
LAST NAME: {LAST}    FIRST NAME: {FIRST}    MI: <A|B|C|D|J|K|L|M|R|S|T>
Pt: {FIRST} {LAST}, {AGE}<y| y/o| yo| years old>
Age: {AGE}   DOB: {DATE}
DOS {DATE}   Loc: {HOSP}
Primary Care: {NAME} — {HOSP} — tel. {PHONE}
Guarantor: {NAME}, {ADDRESS}, {CITY} {STATE} {ZIP}
Guarantor acct {ACCT}   phone {PHONE}
Medical Record Number {MRN}
NHS No: {ACCT}   Hosp No: {MRN}
Tel: {PHONE}  ·  Fax: {FAX}  ·  E-mail: {EMAIL}
T {PHONE}   F {FAX}   W {URL}
Clinic: {HOSP}, {ADDRESS}, {CITY}
Admitting physician: {NAME}    Admit time: {TIME}
Consultant: {NAME}   Specialty: <cardiology|nephrology|GI|neurology|ortho|ID|pulm|endocrine>   Question: {COND}?
cc: {NAME}, {HOSP}; {NAME}, {HOSP}
Copy to: Dr. {LAST} (fax {FAX})
Dictated by: {NAME}  on {DATE} {TIME}
Transcribed: {DATE}    Signed: {DATE}
Report date: {DATE}   Accession: {ACCT}
Ordering provider: {NAME}  NPI {ACCT}
Resident: {NAME}, PGY-<1|2|3|4>   Fellow: {NAME}
Nurse: {FIRST} {LAST}, RN   ext. {PHONE}
Case manager: {NAME}  {PHONE}  {EMAIL}
Social worker: {NAME} ({EMAIL})
Interpreter needed: <Y|N>   Contact: {NAME} {PHONE}
Next of kin: {NAME}, {ADDRESS}, {CITY}
NOK: {NAME} / {PHONE}
Mother: {NAME}   Father: {NAME}
Parent/guardian: {NAME}   ph {PHONE}
Health care proxy: {NAME}   tel {PHONE}
POA: {NAME}  ({PHONE}, {EMAIL})
Code status: <Full code|DNR|DNR/DNI|Comfort care>   Attending: {NAME}   Allergies: <NKDA|{MED}>
Payer: {ACCT}   Auth #: {ACCT} for {PROC}   Valid to {DATE}
Member ID {ACCT} | Group # {ACCT} | Plan ph {PHONE}
Secondary insurance: {ACCT} (subscriber {NAME})
Claim no. {ACCT}   DOS {DATE}   Billed: {PROC}
Patient ID: {MRN}   Visit ID: {ACCT}
CSN: {ACCT}   HAR: {ACCT}
FIN {ACCT}  MRN {MRN}  Adm {DATE}
{HOSP} | Department of <Medicine|Surgery|Pediatrics|Radiology|Emergency Medicine|Obstetrics> | {ADDRESS}, {CITY}, {STATE} {ZIP}
{HOSP}  -  Discharge Summary  -  {DATE}
{HOSP}   Tel {PHONE}   www: {URL}
OPERATIVE REPORT   Pt: {NAME}   MRN: {MRN}   Date: {DATE}
Pre-op dx: {COND}   Post-op dx: same
Preoperative diagnosis: {COND}   Planned: {PROC}
Surgery date: {DATE}    Surgeon: {NAME}    Assistant: {NAME}
Anesthesia: {NAME}, <CRNA|MD>    Start {TIME}  End {TIME}
RADIOLOGY   Exam: {TEST}   Date: {DATE}   Ref: {NAME}
Study: {TEST} of {ANAT}   Ordering: Dr. {LAST}   Accn {ACCT}
Specimen rec'd {DATE} {TIME}   Lab acc# {ACCT}   Collected by {FIRST} {LAST}
Lab: {HOSP} Laboratory, {CITY}   CLIA {ACCT}
Pt DOB {DATE}, MRN {MRN}, allergy to {MED}
Presenting problem: {COND} / Triage time: {TIME}
Arrival: {TIME} via <EMS|private vehicle|walk-in|wheelchair|police>   Triage RN: {NAME}
ED Provider: {NAME}   Disposition: <admit|home|transfer|AMA|observation>
Transfer from: {HOSP}   Transfer to: {HOSP}   For: {PROC}
Accepting physician: Dr. {NAME} at {HOSP}
Referred from {HOSP} (fax {FAX}) for {COND}
Problem on referral: {COND}  |  Referral date: {DATE}  |  Urgency: <routine|urgent|2WW|STAT>
Home address — {ADDRESS}, {CITY}, {STATE}, {ZIP}
Postcode: {ZIP}   Town: {CITY}
{NAME} · {ADDRESS} · {CITY} · {PHONE}
Mobile {PHONE}   Landline {PHONE}   Pref: <mobile|landline|text|email>
Contact pref: <phone|email|portal|mail>   Email: {EMAIL}
Ph. {PHONE} (h)  {PHONE} (w)  {PHONE} (m)
Best # to reach: {PHONE} after {TIME}
Email: {EMAIL}  |  Web: {URL}
Referral fax: {FAX}   Referral email: {EMAIL}
Fax cover — To: {NAME}  Fax: {FAX}  From: {NAME}  Pages: {N}
TO: {HOSP} Health Information Mgmt   FAX: {FAX}
Date of birth: {DATE}    Gender: <male|female|nonbinary|unknown>
D.O.B.: {DATE}   Age {AGE}
Geb.-Datum: {DATE}   Patient-Nr.: {MRN}
Nom: {LAST}   Prénom: {FIRST}   Né(e) le: {DATE}
Paciente: {NAME}   Fecha: {DATE}   Hist. clínica: {MRN}
Naam: {NAME}   Geboortedatum: {DATE}
Pat. {LAST}, {FIRST}  *{DATE}
Pt ID {MRN} / Enc {ACCT} / {DATE} {TIME}
Appt: {DATE} @ {TIME} w/ {NAME} — reason: {COND}
Next appt {DATE} {TIME}, {HOSP} (pre-op for {PROC})
Follow-up with: {NAME} in {N} weeks  ({PHONE})
Provider: {FIRST} {LAST}, <NP|PA-C|MD|DO|RN>
Author: {NAME}   Service: <Hospitalist|Cardiology|General Surgery|Oncology|Psychiatry>   Note time: {TIME}
Electronically signed by {NAME} on {DATE} at {TIME}
Pharmacist: {NAME}, PharmD   {PHARM}
Rx to: {PHARM}, {ADDRESS}, {CITY}  {PHONE}
Current med on file: {MED} {DOSE} {FREQ}
Allergies/Intolerances: {MED} — {COND}
Allergy: {MED} (<severe|moderate|mild>)  |  Chief c/o: {COND}
Dx: {COND}   Plan: {PROC} {DATE}
Admit dx: {COND}    Admitting MD: {NAME}
Principal diagnosis: {COND}   Secondary: {COND}
Reason for visit: {COND}   Seen by: {NAME}
RFV — {COND}; pt {AGE} yo, DOB {DATE}
Working dx: r/o {COND}   Referring: {NAME} {FAX}
Procedure: {PROC}   Site: {ANAT}   Date: {DATE}
Booked for {PROC} — {HOSP}, {DATE}, arrive {TIME}
Indication for {TEST}: {COND}
Isolation: <none|contact|droplet|airborne>   Allergies: {MED}
Pregnant: <Y|N|N/A>   LMP {DATE}   Allergies {MED}
[x] Allergies reviewed ({MED})   [ ] NKA   Reviewed by {FIRST} {LAST}
[ ] New pt  [x] Est pt   MRN {MRN}
Worker's comp claim {ACCT}   Employer contact: {NAME} {PHONE}
Identifier: {SSN}   Verified by: {NAME}   Method: <photo ID|two identifiers|wristband>
Wristband check: {NAME} / {DATE} / {MRN}
Bed: {N}   Unit: <4W|MICU|Step-down|L&D|Peds|Oncology>   Charge RN: {FIRST}
Care team: {NAME} (attending), {NAME} (resident), {NAME} (RN)
Hospitalist on call: {NAME}  pager {PHONE}
Oncologist: {NAME}   Tumor board {DATE}   Dx: {COND}
OB: {NAME}   EDD {DATE}   G{N}P{N}
Peds pt — Guardian {NAME}, DOB {DATE}, school nurse {PHONE}
SNF: {HOSP}  Admit {DATE}  Contact {NAME} ({PHONE})
Hospice agency {HOSP} / RN {NAME} / {PHONE} / terminal dx {COND}
Discharged to: {ADDRESS}, {CITY} with {NAME}
Patient {LAST} {FIRST} — {AGE}Y — MRN{MRN}
{LAST}, {FIRST}  {DATE}  {MRN}  {HOSP}
{NAME} ({AGE}<M|F>) DOB {DATE}
Re: {NAME}, DOB {DATE}, NHS {ACCT}
RE: {FIRST} {LAST}   Our ref: {ACCT}   Your ref: {ACCT}
Account status: <active|pending|closed|in collections>   Acct {ACCT}
Balance acct: {ACCT}   Billing ph {PHONE}   Billing email {EMAIL}
Visit type: <telehealth|in person|phone|home visit>   Link: {URL}
Telehealth link {URL}   Dial-in {PHONE}   Topic: {COND} f/u
Teleconsult — originating site {HOSP}, distant site {HOSP}
Address (temp): {ADDRESS}, {CITY}   Since: {DATE}
Prev. address: {ADDRESS}, {STATE} {ZIP}
State of residence: {STATE}   County/City: {CITY}
Born: {DATE} in {CITY}
Last visit {DATE} | Next {DATE} | PCP {LAST}
""".strip().splitlines()

# Administrative sentences: scheduling, billing, authorisation, records, transport.
ADMIN_FOURTH = r"""
Pt called to reschedule her appt from {DATE} to {DATE} at {TIME}.
LVM for {NAME} at {PHONE} re: upcoming {PROC}, asked to call back before {TIME}.
Prior auth for {PROC} submitted to insurer on {DATE}, ref # {ACCT}; decision expected in {N} business days.
PA denied for {MED} — appeal letter faxed to {FAX} on {DATE}.
Insurance card scanned; member ID {ACCT}, subscriber {NAME}, DOB {DATE}.
Records request rec'd from {HOSP} for dates {DATE} to {DATE}; signed release on file.
Medical records released to {NAME} at {ADDRESS}, {CITY}, {STATE} {ZIP} per pt authorization dated {DATE}.
Transport arranged w/ wheelchair van, pickup at {ADDRESS} at {TIME} on {DATE}.
Pt requires interpreter for all visits; agency contact {PHONE}, interpreter ID {ACCT}.
Interpreter {FIRST} {LAST} present by phone for consent discussion.
Consent for {PROC} signed by pt and witnessed by {NAME} on {DATE} at {TIME}.
Daughter {NAME} is authorized to receive information; her number is {PHONE}.
Release of information form signed, allowing disclosure to {HOSP} and to {NAME}.
Called pharmacy ({PHARM}, {PHONE}) to clarify {MED} {DOSE} script — pharmacist says ins requires PA.
Refill request for {MED} {DOSE} {FREQ} sent to {PHARM}.
90-day supply of {MED} approved; pt to pick up at {PHARM} after {TIME}.
Pt states {PHARM} is out of stock of {MED}; rx transferred to {PHARM}.
Mail-order pharmacy confirmed shipment to {ADDRESS}, tracking sent to {EMAIL}.
Call back: {NAME}, {PHONE}, re lab results — pls call after {TIME}.
Spoke w/ pt's wife {FIRST}; she will bring him to {HOSP} on {DATE}.
No-show for appt on {DATE}. Letter mailed to {ADDRESS}, {CITY}.
Pt cancelled {PROC} scheduled {DATE} due to transportation issues; will call {PHONE} to rebook.
Appointment reminder text sent to {PHONE} for {DATE} at {TIME}.
Portal message from pt ({EMAIL}) asking whether {TEST} results are back.
Statement for acct {ACCT} mailed {DATE}; balance due on receipt.
Payment plan set up for account {ACCT}: {N} monthly installments, first due {DATE}.
Financial assistance application received from {NAME}; SSN {SSN} verified.
Claim {ACCT} rejected — wrong DOB on file ({DATE}); corrected and resubmitted {DATE}.
Coordination of benefits: primary policy {ACCT}, secondary {ACCT}; call payer at {PHONE}.
EOB received for DOS {DATE}, claim {ACCT}, pt responsibility pending.
Pt requests itemized bill be emailed to {EMAIL}.
Outside films from {HOSP} requested; courier to deliver to {ADDRESS} by {DATE}.
Faxed clinic notes and {TEST} report to Dr. {LAST} at {FAX}, {N} pages, confirmation rec'd.
Fax to {FAX} failed x{N}; will retry at {TIME}.
Referral to {HOSP} for {COND} placed {DATE}; their intake line is {PHONE}.
Specialist office ({HOSP}) states next available is {DATE}; pt placed on cancellation list.
Pt asked for a copy of her records on CD; pickup at front desk {DATE}.
Disability paperwork for {NAME} completed and faxed to employer at {FAX}.
FMLA form received from {NAME}'s employer; due {DATE}; routed to provider.
Work note issued: pt may return {DATE}, light duty x {N} weeks.
School excuse faxed to {FAX} for {FIRST}, absent {DATE} through {DATE}.
Jury duty excusal letter mailed to pt at {ADDRESS}, {ZIP}.
Ambulance transfer to {HOSP} booked for {TIME}; receiving RN {NAME}, ph {PHONE}.
Ride share voucher issued for visit {DATE}, pickup {ADDRESS}, dropoff {HOSP}.
Pt's son {NAME} ({PHONE}) will provide transport home after {PROC}.
Pt requests all mail sent to alternate address: {ADDRESS}, {CITY} {STATE} {ZIP}.
Updated demographics: new phone {PHONE}, new email {EMAIL}, old number disconnected.
Address change per pt — was {ADDRESS}, now {ADDRESS}.
Identity verified with name, DOB {DATE}, and last 4 of SSN before discussing results.
Two identifiers confirmed ({NAME}, {DATE}) prior to release of {TEST} result.
Duplicate chart found — MRN {MRN} merged into MRN {MRN} by HIM on {DATE}.
HIM note: record of {NAME} amended at pt request, see form dated {DATE}.
Pt declined to sign consent for photography; documented by {NAME}.
Advance directive copy received from {NAME} (HCP), scanned {DATE}.
POLST form on file dated {DATE}, signed by {NAME}.
Guardian {NAME} gave verbal consent by phone ({PHONE}) for {PROC}, second witness {FIRST} {LAST}.
Telehealth consent obtained; visit link sent to {EMAIL}, backup dial-in {PHONE}.
Video visit link {URL} expired — resent to pt at {TIME}.
Pt unable to log in to portal ({URL}); password reset email sent to {EMAIL}.
Tried pt x{N} at {PHONE}, no answer, mailbox full.
Message left w/ spouse at {PHONE} to call {HOSP} scheduling.
Pt returned call at {TIME}; scheduled {TEST} for {DATE} at {HOSP}.
Pre-registration completed for {PROC} on {DATE}: arrive {TIME}, NPO after midnight, bring ID and insurance card.
Pre-op packet mailed to {ADDRESS}; pt to call {PHONE} w/ questions.
Surgery scheduler {NAME} booked {PROC} with Dr. {LAST} on {DATE}, case # {ACCT}.
OR time moved from {TIME} to {TIME}; pt notified via {PHONE}.
Pt wishes to postpone {PROC} until after {DATE} for work reasons.
Imaging center {HOSP} needs auth # before they can schedule {TEST}; auth {ACCT} given.
Insurance requires step therapy — must try {MED} before {MED} is covered.
Formulary alternative suggested by {PHARM}: {MED} instead of {MED}.
Copay card for {MED} activated, card # {ACCT}, expires {DATE}.
Specialty pharmacy {PHARM} will call pt at {PHONE} to arrange delivery of {MED}.
Controlled substance agreement signed {DATE}; designated pharmacy {PHARM}.
Early refill request for {MED} denied per pain contract; pt informed by {NAME}.
Lost rx report: pt states {MED} {DOSE} stolen, police report # {ACCT}.
Vaccine record faxed to {HOSP} at pt's request, fax {FAX}.
Pt's lawyer {NAME} requested records; subpoena received {DATE}, forwarded to legal at {EMAIL}.
Attorney request for billing records on acct {ACCT} — needs signed HIPAA auth.
Life insurance exam results requested by {NAME}; pt authorization expires {DATE}.
Case manager {NAME} coordinating SNF placement; bed offer from {HOSP} for {DATE}.
Home health referral sent to {HOSP} ({FAX}) for {N} visits/wk.
Oxygen supplier to deliver concentrator to {ADDRESS} on {DATE} between {TIME} and {TIME}.
Device compliance download requested from vendor, acct {ACCT}, contact {EMAIL}.
Hospice intake call placed to {HOSP}; liaison {NAME} will call family at {PHONE}.
Family meeting scheduled {DATE} {TIME}; attendees {NAME}, {NAME}, and SW {NAME}.
Social work to assist with transport to {PROC} at {HOSP} MWF at {TIME}.
Pt requests female provider; appt changed to Dr. {LAST} on {DATE}.
Pt asked that {NAME} not be given any info — flagged in chart.
Confidential visit: do not send EOB to home address; use {EMAIL} only.
Sign-in at {TIME}; pt roomed at {TIME}; seen by provider at {TIME}.
Wait time complaint from {NAME} forwarded to patient relations, {EMAIL}.
Grievance #{ACCT} filed by pt's daughter re: {DATE} visit; response due {DATE}.
Letter of medical necessity for {PROC} written and faxed to payer ({FAX}).
Peer-to-peer for {PROC} scheduled {DATE} at {TIME}; reviewer line {PHONE}, case {ACCT}.
Retro-auth requested for ED visit {DATE}, claim {ACCT}.
State coverage lapsed {DATE}; pt referred to financial counselor {NAME} at {PHONE}.
Self-pay estimate for {PROC} given: pt to call billing at {PHONE} w/ questions.
Good-faith estimate emailed to {EMAIL} on {DATE}.
Refund of overpayment on account {ACCT} issued {DATE}, mailed to {ADDRESS}.
Collections hold placed on acct {ACCT} pending review of charity care app.
Pt in {CITY}, {STATE} until {DATE}; requests visits by video and rx to {PHARM} there.
Out-of-state pt; records to be mailed to {HOSP}, {ADDRESS}, {CITY}, {STATE} {ZIP}.
Travel letter for {MED} {ROUTE} supplies and sharps written for pt's trip on {DATE}.
Rx for {MED} {DOSE} {ROUTE} {FREQ} e-prescribed to {PHARM}, confirmation # {ACCT}.
Pharmacy callback — {PHARM} requests clarification: {MED} {DOSE} or {DOSE}? Ph {PHONE}.
Prescription sent to wrong pharmacy; cancelled at {PHARM} and resent to {PHARM}.
Pt picked up {MED} from {PHARM} on {DATE}, per fill history.
Med delivery to {ADDRESS} scheduled {DATE}; pt must sign at door.
Patient assistance program application for {MED} mailed to manufacturer; pt SSN {SSN} on form.
Lab requisition for {TEST} faxed to {HOSP} lab, fax {FAX}; pt to go fasting.
Results of {TEST} ({RESULT}) mailed to pt at {ADDRESS} per her preference.
Critical value called to Dr. {LAST} at {TIME}: {TEST} {RESULT}, read-back done.
Outside {TEST} from {HOSP} dated {DATE} scanned into chart, MRN {MRN}.
Pt will bring prior records from {HOSP} to visit on {DATE}.
Unable to reach pt re: abnormal {TEST}; certified letter sent to {ADDRESS} on {DATE}.
Welfare check requested — pt not answering {PHONE} since {DATE}; police notified in {CITY}.
Emergency contact updated to {NAME}, {PHONE}.
Pt gave permission to discuss {COND} diagnosis with sister {FIRST} only.
Verbal release: OK to leave detailed msg at {PHONE}; not OK at work number {PHONE}.
Pt prefers contact by email ({EMAIL}); no voicemails please.
New pt intake packet emailed to {EMAIL}; complete before {DATE}.
Registration: pt {NAME}, DOB {DATE}, insurance {ACCT}, PCP {NAME}, pharmacy {PHARM}.
Pt is transferring care from {HOSP}; records release faxed to them at {FAX}.
Pt dismissed from practice as of {DATE}; certified letter to {ADDRESS}, {CITY} {STATE}.
Walk-in pt without appt; added on at {TIME} with {NAME}.
Schedule blocked {DATE} — provider out; {N} pts to be rebooked by {NAME}.
Waitlist: call {NAME} at {PHONE} if anything opens before {DATE}.
Follow-up for {COND} booked in {N} weeks at {HOSP} with Dr. {LAST}.
Post-op check after {PROC} set for {DATE}; sutures out at that visit.
Pt requests sooner appt for worsening {COND}; triaged to nurse line, {PHONE}.
Pt called re: side effects of {MED}, message routed to Dr. {LAST}; callback # {PHONE}.
Nurse line call {DATE} {TIME}: mother {NAME} reports child has {COND}, advised ED.
After-hours answering service page from {NAME}, {PHONE}, re: refill of {MED}.
Voicemail from {PHARM} at {TIME}: prior auth needed for {MED} {DOSE}.
Bariatric program orientation for {PROC} on {DATE}; pt must attend before insurance review.
Pt must complete {N} weeks of {PROC=PT} before {TEST} of {ANAT} will be authorized; PT clinic {HOSP}.
Insurance denial for {TEST} of {ANAT} — not medically necessary per payer; appeal # {ACCT}.
Work comp adjuster {NAME} ({PHONE}, {EMAIL}) requests notes for claim {ACCT}, {COND=injury} to {ANAT} on {DATE}.
Pt declined interpreter; family member {NAME} interpreting at pt request, documented.
Sign language interpreter booked for {DATE} {TIME}; confirmation {ACCT}.
Pt needs TTY; relay number {PHONE} added to chart.
Pt cannot drive after {PROC}; escort {NAME}, {PHONE}, confirmed for discharge at {TIME}.
Pt will stay with friend at {ADDRESS}, {CITY} after discharge; home health aware.
Discharge paperwork and {MED} rx handed to pt's husband {FIRST} at {TIME}.
Belongings bag #{N} given to {NAME}; signed receipt in chart.
Pt's badge/ID photocopied for registration; policy {ACCT}, group {ACCT}, payer phone {PHONE}.
Reminder: {NAME} has an outstanding copay from the {DATE} visit; pay online at {URL} or call {PHONE}.
""".strip().splitlines()

# Letters: openers ("Dear ..."), referral and consult bodies, sign-offs, letterheads.
LETTER_FOURTH = r"""
Dear Dr {LAST}
Dear Dr. {FIRST} {LAST},
Dear <Mr.|Mrs.|Ms.> {LAST},
Dear Colleague, re: {NAME}, DOB {DATE}, MRN {MRN}
Dear Dr. {LAST}, thank you for referring {NAME}, a {AGE}-year-old <man|woman> with {COND}.
Dear Dr {LAST}, I saw your patient {NAME} in clinic today on {DATE}.
Dear Doctor, Re: {NAME} ({DATE})
Dear <Sir/Madam|Sir or Madam>, I am writing regarding my patient {NAME} of {ADDRESS}, {CITY}.
Dear Dr. {LAST}, Many thanks for asking me to see this {AGE} year old with a history of {COND}.
Dear {NAME},
Dear Dr. {LAST}, I would be grateful if you could review {NAME} regarding {COND} of the {ANAT}.
Dear Dr {LAST}, further to our telephone conversation on {DATE}, I am writing to confirm the plan for {FIRST}.
Dear Dr. {LAST}, I reviewed {NAME} ({MRN}) in the follow-up clinic at {HOSP} on {DATE}.
Dear <Mr|Mrs|Ms|Miss> {LAST}, your recent {TEST} result was {RESULT}.
Dear Dr {LAST} — urgent referral: {NAME}, {AGE}, suspected {COND}
Dear Dr. {FIRST} {LAST}, thank you for your kind referral of this pleasant <gentleman|lady>, who is known to have {COND}.
Dear Team at {HOSP},
Re: {NAME}   DOB: {DATE}   MRN: {MRN}   NHS/ID: {ACCT}
Patient: {NAME} | DOB {DATE} | Address: {ADDRESS}, {CITY}, {STATE} {ZIP}
Reason for referral: {COND} not responding to {MED} {DOSE} {FREQ}.
I would be grateful for your opinion regarding ongoing {COND} and whether a {PROC} might be appropriate.
She has had {N} episodes of {COND} over the last year despite {MED}.
On examination there was {COND} over the {ANAT} with mild {COND}.
His {TEST} on {DATE} showed {RESULT}, which is a significant change from {RESULT} previously.
Diagnoses: 1. {COND} 2. {COND} 3. {COND}
Current medications: {MED} {DOSE} {FREQ}; {MED} {DOSE} {FREQ}; {MED} {DOSE} {ROUTE} {FREQ}.
Allergies: {MED} ({COND}), {MED}.
Plan: commence {MED} {DOSE} {FREQ} and repeat {TEST} in {N} weeks.
I have explained the risks and benefits of {PROC} and she would like to proceed.
We will arrange a {TEST} and review her in clinic with the result.
I would be grateful if you could continue {MED} and titrate to a target {TEST} of {RESULT}.
He underwent {PROC} on {DATE} at {HOSP} without complication.
Impression: {COND}, likely secondary to {COND}.
Investigations: {TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}.
She was discharged on {DATE} on {MED} {DOSE} {ROUTE} {FREQ} for {N} days.
I have not made any changes to her {MED} at this stage, pending the {TEST}.
Please stop {MED} and start {MED} {DOSE} {FREQ=once daily} instead.
Past medical history includes {COND}, {COND} and a {PROC} in {DATE}.
He is a {AGE}-year-old retired <teacher|builder|accountant> who lives with his wife in {CITY}.
She reports a {N}-month history of {COND} affecting the {ANAT}, worse at night.
There is no family history of {COND}.
I note that {MED} was stopped in the past due to {COND}.
Examination of the {ANAT} was unremarkable; there was some {COND} of the {ANAT}.
{TEST} today: {RESULT}.
I have listed her for {PROC}, which we anticipate will take place within {N} weeks.
In view of the {RESULT} on {TEST}, I have referred him on to Dr. {LAST} at {HOSP}.
I would be grateful if the practice could check {TEST} and {TEST} in {N} weeks and forward the results.
We discussed the diagnosis of {COND} at length and I have given him written information.
Follow-up: {DATE} at {TIME}, {HOSP} outpatient department.
Her symptoms have improved considerably since the {MED} was increased to {DOSE}.
Unfortunately {FIRST} did not attend the appointment on {DATE}; we have offered a further date.
Yours sincerely,  Dr {FIRST} {LAST}, Consultant
Yours sincerely, {NAME}, MBBS, <Consultant|Specialist Registrar|Attending>
Kind regards, {FIRST}
With best wishes, {NAME} | Tel {PHONE} | Fax {FAX}
cc: {NAME}, {ADDRESS}, {CITY} {ZIP}
cc: Dr {LAST}, {HOSP}; patient
{HOSP} · {ADDRESS} · {CITY}, {STATE} {ZIP} · Tel {PHONE}
Secretary: {FIRST} {LAST}  Direct line {PHONE}  Email {EMAIL}
Dictated {DATE}, typed {DATE} ({FIRST}/{LAST})
Clinic date: {DATE}    Typed by: {FIRST}
Please do not hesitate to contact me on {PHONE} should you have any concerns.
If you have any questions please call the clinic on {PHONE} or email {EMAIL}.
Appointments: {PHONE}   Web: {URL}
Hospital No: {MRN}   Claim ref: {ACCT}
Thank you for referring {FIRST}; I will keep you informed of her progress.
Thank you once again for asking me to see {FIRST}.
I will see him again in {N} months with a repeat {TEST}.
No further follow-up is required; I have discharged her back to your care at {HOSP}.
Problem list: {COND} / {COND} / s/p {PROC}
Medications on discharge: {MED} {DOSE} {FREQ}, {MED} {DOSE} {FREQ=prn}
She takes {MED} and {MED}, and occasionally {MED} for {COND}.
Social: lives alone at {ADDRESS}; daughter {FIRST} ({PHONE}) is next of kin.
I would like to thank Dr. {LAST} for the referral and for the detailed letter dated {DATE}.
Summary: {AGE} yo with {COND} of the {ANAT}, {TEST} {RESULT}, now for {PROC}.
{TEST} was performed on {DATE} and demonstrated {COND} in the {ANAT}.
There was no evidence of {COND} on the {TEST}.
Given her history of {COND} I would avoid {MED} in future.
He is keen to avoid surgery and so we have opted for a trial of {MED} {DOSE} {ROUTE} {FREQ} in the first instance.
I have asked {FIRST} to keep a symptom diary and bring it to the next visit.
The patient has consented to this letter being copied to her at {ADDRESS}, {CITY}.
If the {COND} recurs, please re-refer directly to my clinic at {HOSP}.
Her {TEST} has risen from {RESULT} to {RESULT} over {N} months.
On review today {FIRST} reports the {COND} has largely settled.
Obs: {TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}.
Operation note summary: {PROC} of the {ANAT}, performed {DATE}, no intra-operative complications.
We have started {MED} {DOSE} {ROUTE} {FREQ} as prophylaxis until mobile.
As discussed, the results of your {TEST} were {RESULT}, which is within the expected range.
I am pleased to let you know that your {PROC} has been booked for {DATE} at {TIME}.
Please arrive at {HOSP}, {ADDRESS}, at {TIME} and report to reception.
Please do not eat for {N} hours before your {PROC}.
Please continue {MED} as usual but withhold {MED} for {N} days beforehand.
If you are unable to attend, please telephone {PHONE} quoting reference {ACCT}.
We were unable to contact you on {PHONE} so we are writing to you at this address.
Your next appointment is on {DATE}; please bring a list of all your medications.
Opinion: I think the most likely explanation for his symptoms is {COND}, with {COND} a less likely alternative.
Differential includes {COND} and {COND}; I have requested a {TEST} to help distinguish these.
She was admitted under the care of Dr. {LAST} on {DATE} with {COND}.
Key findings: [x] {COND}  [ ] {COND}  [x] abnormal {TEST}
Actions for GP: (1) check {TEST} in {N} weeks (2) stop {MED} (3) refer to {HOSP} if {COND}
I have advised her to avoid heavy lifting for {N} weeks following the {PROC}.
Her husband, {NAME}, was present during the consultation.
Mr {LAST} attended with his son {FIRST}, who can be contacted on {PHONE}.
The {TEST} demonstrated {RESULT} and I have therefore increased the {MED} to {DOSE} {FREQ}.
I have discussed his case at our multidisciplinary meeting on {DATE} and the consensus is for {PROC}.
Unfortunately the {PROC} was complicated by {COND}, which was managed conservatively.
Over the past {N} weeks, {FIRST} has developed worsening {COND}.
I would be grateful for an urgent {TEST} of the {ANAT}.
Referring clinician: Dr. {FIRST} {LAST}, {HOSP}, {CITY}  Tel: {PHONE}  Fax: {FAX}
Date of letter: {DATE}   Our ref: {ACCT}/{MRN}
Please send all correspondence to {ADDRESS}, {CITY}, {STATE} {ZIP} or {EMAIL}.
I enclose a copy of the {TEST} report from {DATE} for your records.
She has been using {MED} {ROUTE} {FREQ} with partial benefit.
{COND} — stable. {COND} — improving on {MED}. {COND} — for review.
The plan is to taper the {MED} by {DOSE} every {N} days until stopped.
There are no red flag features of {COND} and I have reassured him accordingly.
Signed electronically by {NAME}, {DATE} {TIME}
Best regards, Dr. {LAST} on behalf of Dr. {LAST}
Electronically signed: {FIRST} {LAST}, Nurse Practitioner, {HOSP}
Ms {LAST} is now {N} weeks post {PROC} and is making good progress.
Repeat {TEST} on {DATE}: {RESULT} (previously {RESULT}).
I have prescribed {MED} {DOSE} {FREQ} for {N} days and asked her to collect it from {PHARM}.
Please could you arrange for {FIRST} to have a {TEST} at the surgery prior to her review on {DATE}.
Should her {COND} worsen before then, she knows to attend {HOSP} emergency department.
""".strip().splitlines()

# Patient-portal messages, texts and voicemail transcripts, and staff replies.
MESSAGE_FOURTH = r"""
hi this is {FIRST} {LAST} calling about my {MED} refill pls send to {PHARM} on {ADDRESS}
hey its {FIRST} my {COND} is back again and the {MED} isnt helping much
can u tell dr {LAST} the {ANAT} pain is worse since {DATE}
idk if this is normal but ive had {COND} for like {N} days now
taking {MED} {DOSE} {FREQ} like she said but still no better
pls cancel my appt on {DATE} at {TIME} something came up
my mom {NAME} needs her {MED} refilled asap shes almost out
got my {TEST} back it says {RESULT} is that bad??
hi its {NAME} dob {DATE} just wanted to confirm my appt tmrw
can someone call me back at {PHONE} abt my {TEST} results thx
voicemail: hi yes this is {FIRST} umm my dad fell and hurt his {ANAT} can someone call {PHONE}
u guys sent my rx to the wrong pharmacy i use {PHARM} not the other one
is it ok to take {MED} w/ {MED} or will that mess me up
my new email is {EMAIL} pls update it thx
moved to {ADDRESS} {CITY} {ZIP} pls update my file
been having {COND} and {COND} since i started the {MED}
dr said {DOSE} {FREQ} but the bottle says something else which one is right
hi sorry to bother u again but theres {COND} on my {ANAT} idk what to do
do i need to fast b4 the {TEST} on {DATE}
when will i hear back about the {PROC} scheduling its been {N} weeks
this is {FIRST} {LAST} again returning ur call my # is {PHONE}
my daughter {FIRST} has had {COND} since last nite should we bring her in
can i get a note for work i was out {DATE} thru {DATE} w/ {COND}
rn my {ANAT} hurts so bad i cant sleep
pharmacy said they never got it pls resend {MED} {DOSE} to {PHARM}
thx so much for fitting me in today {FIRST} u were great
ok so the {MED} makes me {COND} all day is there something else i can try
im on {MED} {DOSE} {FREQ=2x a day} and {MED} {FREQ=at night} just fyi
call my wife {FIRST} at {PHONE} if u cant reach me
hi i had the {PROC} on {DATE} and now theres some {COND} near the cut
<pls|please|plz> send my {TEST} results to {EMAIL}
the nurse said my {TEST} was {RESULT} but what does that mean for me
hi its {NAME} from {CITY} i was seen at {HOSP} last week and they said f/u w/ u
voicemail transcript: this message is for dr {LAST} its {FIRST} calling about my {COND} pls call {PHONE} thank u
my insurance changed new member id is {ACCT}
need to reschedule {PROC} bc i have {COND} now
is {TIME} still ok for tmrw or should i come earlier
pls dont call my home # only my cell {PHONE}
he's been on {MED} for {N} days and still has {COND}
i ran out of my {MED} yesterday can u call it in to {PHARM} in {CITY}
{COND} in my {ANAT} on and off since the {PROC}
hey so i checked my {TEST} at home and got {RESULT} twice today
whats the address again for the lab i thought it was {ADDRESS}
idk my mrn but my name is {NAME} dob {DATE}
hi my mother {FIRST} {LAST} is at {HOSP} rn they want to do a {PROC} is that ok w/ dr {LAST}
i stopped the {MED} bc of {COND} hope thats ok
can u fax the records to {FAX} attn {NAME}
the {MED} {DOSE} pills are huge can i cut them in half
thx for the call back ill try the {DOSE} {FREQ} and see
my son is {AGE} and keeps getting {COND} is that normal at his age
hi im supposed to have my {TEST} b4 my visit on {DATE} where do i go
reply from staff: hi {FIRST}, dr {LAST} sent the {MED} to {PHARM}, it should be ready after {TIME}
staff reply: we got ur message, ur {TEST} was {RESULT} which is in normal range
staff: pls call us at {PHONE} to set up ur {PROC}
Hi {FIRST} - your appt is confirmed for {DATE} at {TIME}. reply C to confirm
nurse reply: ok to continue {MED} {DOSE} {FREQ}, call if {COND} gets worse
i think im allergic to {MED} broke out all over my {ANAT}
can i pick up the paperwork at {HOSP} or do u mail it to {ADDRESS}
pls have someone call {FIRST} (my sister) {PHONE} shes my emergency contact
got a bill for acct {ACCT} but i already paid it??
hi dr {LAST} quick question can i drink on {MED}
had {COND} all weekend took {MED} {DOSE} and it helped a little
u said to check my {TEST} {FREQ} and its been {RESULT} mostly
im at {PHARM} rn and they say the rx needs prior auth
{FIRST} here, pls text me dont call im at work {PHONE}
my husband {NAME} is having {COND} again should he go to er or wait
do i still need the {PROC} if the {TEST} was normal
the {MED} is too expensive at {PHARM} is there a generic
bc of the {COND} i cant really walk much rn
hello my name is {FIRST} {LAST} and i need to make an appt for my {COND}
called {N} times no answer pls call me {PHONE}
been having {COND} since the {PROC} idk if thats normal
can u up my {MED} dose the {DOSE} isnt doing much
my grandma {NAME} age {AGE} lives at {ADDRESS} and cant get to the clinic can someone come out
wanted to let u know the {COND} is way better since starting {MED}
pls send a copy of my {TEST} to dr {LAST} at {HOSP}
what time do i need to be there for the {PROC} {DATE}
ok sounds good thx {FIRST}
i took {DOSE} instead of {DOSE} by mistake what do i do
its {NAME} again the {ANAT} thing is spreading
voicemail: hi its {FIRST} from {CITY} calling for my mom shes got {COND} and {COND} pls call {PHONE} or {PHONE}
the portal wont let me see my {TEST} results
can my {ANAT} pain be from the {MED}
hi my kid needs shot records for school his name is {NAME} dob {DATE}
we r running late be there by {TIME}
cant make it {DATE} can we do {DATE} instead
just got home from {HOSP} they said i had {COND} and gave me {MED}
my {TEST} came back {RESULT} and {TEST} was {RESULT} what now
pls update my pharmacy to {PHARM} {ADDRESS} {CITY}
my ssn is {SSN} for the insurance form
hey im having {COND} after the {MED} shot in my {ANAT}
u can leave a detailed msg at {PHONE} its private
wanted to ask if i should keep taking {MED} b4 the {PROC} on {DATE}
hi im {FIRST}s caregiver she cant use the phone email me at {EMAIL}
idk what the {RESULT} on my {TEST} means can u explain
still waiting on the referral to {HOSP} for {PROC}
new # {PHONE} old one is disconnected
i think the {MED} is giving me {COND} should i stop
pls call {NAME} at {PHONE} after {TIME} she has questions abt the bill
thx for everything dr {LAST} feeling much better
{COND} started {DATE} got worse {DATE}
my {TEST} at urgent care was {RESULT} they said to call u
can i take {MED} {DOSE} for the {COND=pain} or is that too much w/ my {COND}
hi its {FIRST} again sorry lol forgot to ask do i need a ride after the {PROC}
the {MED} refill says 0 left can dr {LAST} approve more
hi this is {NAME} with {HOSP} calling to get records on a shared pt pls call {PHONE} or fax {FAX}
she keeps scratching her {ANAT} its red and raw
im in {CITY} visiting family till {DATE} can u send rx to {PHARM} here
my dad has {COND} and now {COND} too is it related
pls confirm u have my correct address {ADDRESS} {CITY} {STATE} {ZIP}
forgot my {MED} this morning should i double up tonight
<hey|hi|hello> sorry im not feeling well today can i do a phone visit instead of {TIME}
the {TEST} on {DATE} was {RESULT} and i feel fine so idk
took my last {MED} {DATE} and the {COND} came back {N} days later
my wifes email is {EMAIL} she handles my appts
can u tell me if my {PROC} is covered under {ACCT}
nurse {FIRST} told me to msg if the {COND} didnt improve so here i am
he cant keep the {MED} down
is it ok to shower after the {PROC} or wait
the {COND} in my {ANAT} went down but now theres {COND}
i need a new rx for {MED} {DOSE} {ROUTE} {FREQ} pls
i cant find my {MED} can u call in {N} more days worth
staff msg: {NAME}, ur {TEST} from {DATE} is ready in the portal
reply: hi {FIRST} yes pls keep the appt on {DATE}, bring ur med list
front desk: we left a vm at {PHONE} pls call back to reschedule
can someone explain why my {TEST} went from {RESULT} to {RESULT}
my {AGE} yr old has {COND} can she go to daycare
im outta {MED} since {DATE} pharmacy wont fill w/o new rx
pls mail my records to {NAME} {ADDRESS} {CITY} {STATE} {ZIP}
had a bad reaction to {MED} last nite {COND} and {COND} so we went to {HOSP}
do u guys take walk ins or do i need an appt for {COND}
{COND=pain} in my {ANAT} is like a 7 today
hi dr {LAST} this is {FIRST} {LAST} my {TEST} was {RESULT} at {HOSP} yesterday
thx will pick up at {PHARM} after work around {TIME}
the {MED} dose went from {DOSE} to {DOSE} right? just making sure
my mom says i had {COND} as a baby does that matter for the {PROC}
sorry i missed ur call at {TIME} ill be home all day
i been using the {MED} {ROUTE} like u showed me but its not working
hi my name is {FIRST} i just moved here from {CITY} and need a new doctor
voicemail: yeah hi its {LAST} {FIRST} calling about the {PROC} on {DATE} umm call me back at {PHONE} bye
is the {COND} contagious my kids r home
my {ANAT} feels tight after the {MED} injection
when can i go back to work after the {PROC}
dr {LAST} wants a {TEST} but i had one on {DATE} at {HOSP} do i need another
email me the forms at {EMAIL} or fax to {FAX} whichever
ok i made the appt for {DATE} {TIME} w/ {FIRST} thx
""".strip().splitlines()

FOURTH = {
    "NARRATIVE": NARRATIVE_FOURTH,
    "LIST_ITEM": LIST_ITEM_FOURTH,
    "LAB": LAB_FOURTH,
    "HEADER": HEADER_FOURTH,
    "ADMIN": ADMIN_FOURTH,
    "LETTER": LETTER_FOURTH,
    "MESSAGE": MESSAGE_FOURTH,
}
