"""Second edition of the templates (written in the third session): new sentence
shapes for every pool, in the syntax of templates.py. templates.EDITIONS keeps
them apart from the first edition, and each edition is split into train and
held-out templates on its own. Some lines hold literal tab characters.
"""

# Narrative sentences: HPI, A&P, hospital course, ED, operative, radiology,
# nursing, consult, PT, psychiatry, pediatrics, OB, oncology, telephone.
NARRATIVE_MORE = r"""
pt c/o {COND} x {N}d, denies {COND}<, {COND}| or {COND}|>.
{AGE}<M|F| yo M| yo F> <w/|with> {COND}<, {COND}|> p/w {COND} <since|starting> {DATE}.
Onset of {COND} was <sudden|gradual|insidious>, beginning around {TIME} <yesterday|on {DATE}|this morning>.
<Describes|Characterizes> the {COND} as <sharp|dull|burning|pressure-like>, <non-radiating|radiating to the {ANAT}>, {N}/10 at worst.
Nothing seems to help<,|;> {MED} <did not help|gave only partial relief>.
<Associated|Accompanied> <with|by> {COND}<; no|, but no> {COND}.
<Prior to arrival|PTA> <she|he> took {DOSE} of {MED} without <relief|improvement>.
<Similar|Comparable> episode {N} <months|years> ago that resolved <with|after> {MED}.
Was in <her|his> usual state of health until {N} days ago<,| when> <she|he> noted {COND}.
{N}-day history of {COND}<, now with {COND}|, progressively worse|>.
States the {COND} <wakes|woke> <her|him> from sleep and is worse <at night|lying down|with exertion>.
Reports <poor|decreased|normal> oral intake<, {COND}| and {COND}> over the past {N} days.
<No|Denies> recent travel, sick contacts or new medications<.|; last dose of {MED} on {DATE}.>
Returns to clinic saying the {MED} <made|has made> <her|his> {COND} worse.
Had {N} episodes of {COND} overnight, the <last|most recent> at {TIME}.
Seen at {HOSP} urgent care {N} days ago, <diagnosed with|told it was> {COND}, <sent home on|given> {MED}.
Course notable for <fluctuating|progressive|intermittent> {COND}; currently <better|unchanged|worse>.
# {COND}: continue {MED} {DOSE} {FREQ}, recheck {TEST} in {N} <weeks|months>.
# {COND} - <likely|possibly> <2/2|secondary to> {COND}. <Start|Trial of> {MED} {DOSE} {ROUTE} {FREQ}.
#{N} {COND}, <acute on chronic|new|chronic>: <cont|continue> home {MED}, <hold|holding> {MED}, <trend|f/u> {TEST}.
A: {COND}. P: {MED} {DOSE} {FREQ} x {N} days; return if {COND}.
Assessment: {AGE} yo with {COND}, <clinically|hemodynamically> stable. Plan as below.
Plan: 1) {TEST} 2) {MED} {DOSE} {ROUTE} 3) f/u after {PROC}.
# <Prophylaxis|Ppx>: {MED} {DOSE} {ROUTE} {FREQ}<; SCDs|>.
# FEN: <regular|renal|clear liquid> diet, replete {MED} <prn|per protocol>.
# Dispo: <likely|anticipate> discharge <home|to rehab|to SNF> in {N} days <pending|once> {TEST}<| improves>.
# Code: <Full|DNR/DNI|DNR, OK to intubate> (discussed with {NAME}).
{COND} — <suspect|favor|doubt> {COND}; will obtain {TEST} and empirically start {MED}.
Concern for {COND} given {TEST} of {RESULT}; <low threshold for|will consider> {PROC}.
r/o {COND} vs {COND}; {TEST} <ordered|sent>, {MED} <held|on hold> pending results.
Cannot exclude {COND}<.|; correlate clinically.>
If {TEST} <is positive|is abnormal|rises>, <will|plan to> <escalate to|add> {MED}.
Goal {TEST} {RESULT}<; titrate {MED} accordingly.|.>
<Uptitrate|Wean> {MED} as tolerated<, target {TEST} under {RESULT}|>.
Continue to monitor {TEST} {FREQ} while on {MED}.
{MED} {DOSE} {ROUTE} now, then {DOSE} {FREQ}.
Loaded with {MED} {DOSE} {ROUTE}; maintenance {DOSE} {FREQ} to follow.
Stop {MED} <on|after> {DATE} (total course {N} days).
<Taper|Wean> {MED} by {DOSE} every {N} days until off.
Restart home {MED} once {TEST} <normalizes|is back to baseline>.
No indication for {MED} at this time<.|; revisit at next visit.>
<Pt|Patient> <prefers to defer|declined> {PROC} and would rather try {MED} first.
Shared decision making re: {PROC} vs. continued {MED}.
Hospital course: <briefly|in brief>, <she|he> was admitted for {COND} and treated with {MED} {ROUTE} for {N} days.
On hospital day {N}<,| the patient> developed {COND}<, prompting {TEST}| requiring transfer to the ICU>.
<Her|His> {COND} <was managed|improved> with {MED}, and <she|he> was transitioned to {MED} {ROUTE} on {DATE}.
{TEST} <returned|came back> positive; therapy narrowed to {MED} <on|as of> {DATE}.
By discharge <her|his> {TEST} had <normalized|improved> to {RESULT}.
Stay was complicated by {COND} on {DATE} and {COND}<, both resolved|, managed conservatively>.
<ICU|MICU> course: required {PROC} for {COND}, <weaned|liberated> on day {N}<.|, then transferred to the floor.>
Transferred from {HOSP} for a higher level of care <for|given> {COND}.
<She|He> was seen by PT, who recommended <home with services|acute rehab|SNF>.
Discharged <in stable condition|home> on {DATE} with instructions to follow up with {NAME} in {N} weeks.
Pending at discharge: {TEST}<, {TEST}|>.
New medications: {MED} {DOSE} {FREQ}. Stopped: {MED}. Changed: {MED} to {DOSE}.
ED course: <received|got> {MED} {DOSE} {ROUTE} and {MED} {DOSE} {ROUTE} with <partial|good|minimal> relief.
Triage: {AGE} <y/o|yo> <M|F>, ambulatory, c/o {COND}; {TEST} {RESULT} at triage.
Arrived via EMS at {TIME}; <EMS|medics> gave {MED} {DOSE} en route.
MDM: <presentation|history> most consistent with {COND}; considered {COND} but <less likely|unlikely> given {TEST}.
Dispo: <admit|obs|home> <to|under> Dr. {LAST}<, {HOSP}|>.
Level {N} trauma activation; injuries include {COND} of the {ANAT}.
Mechanism: <fall from standing|MVC at highway speed|bicycle collision>, <with|without> {COND}, <on|not on> {MED}.
Signed out to Dr. {LAST} at {TIME} pending {TEST}.
Return precautions reviewed<, including {COND} and {COND}|>; pt verbalized understanding.
Bedside {TEST} <shows|showed> <no|small|trace> {COND}<.| in the {ANAT}.>
Preoperative diagnosis: {COND}. Postoperative diagnosis: <same|{COND}>.
Procedure performed: {PROC}<| and {PROC}>. Anesthesia: {PROC}.
Surgeon: Dr. {FIRST} {LAST}. Assistant: {FIRST} {LAST}<, PA-C|, MD|>.
Indications: {AGE}-year-old with {COND} refractory to {MED}.
The patient was <placed|positioned> <supine|prone|in lithotomy> and the {ANAT} was prepped and draped in the usual sterile fashion.
An incision was made over the {ANAT} and carried down to the {ANAT}.
<Findings|Operative findings> included a <large|small|{N} cm> {COND} <adherent to|involving> the {ANAT}.
Estimated blood loss minimal; <no|one> drain placed<.| in the {ANAT}.>
Specimen: {ANAT}, sent to pathology<| for frozen section>.
Hemostasis was achieved and the wound was closed in layers<.|, with {MED} infiltrated at the {ANAT}.>
Sponge and needle counts correct x{N}; <she|he> was taken to PACU in stable condition.
Complications: <none|{COND}>. Disposition: <PACU|ICU|home same day>.
IMPRESSION: <No|Negative for> acute {COND}. <Stable|Unchanged> {COND} <in|of> the {ANAT}.
{N} mm {COND} in the {ANAT}, <indeterminate|likely benign|suspicious>; suggest {TEST} in {N} months.
Interval <increase|decrease> in size of the {ANAT} {COND} compared to {DATE}.
Findings <compatible|consistent> with {COND}, without <evidence|signs> of {COND}.
No radiographic evidence of {COND}, {COND}, or {COND}.
Comparison: {TEST} dated {DATE}.
Technique: {TEST} of the {ANAT} <with and without|without> {MED}.
Lines and tubes in <expected|appropriate> position; <mild|trace> {COND} at the {ANAT}.
Limited <study|exam> due to <motion|body habitus>; <cannot exclude|unable to exclude> {COND}.
Critical result <discussed with|called to> Dr. {LAST} at {TIME} on {DATE}.
Pt <resting|sleeping> <comfortably|quietly> in bed, call light within reach, <bed alarm on|fall precautions maintained>.
Repositioned {FREQ}; skin over the {ANAT} <intact|reddened, non-blanchable>.
Peripheral line in the {ANAT} <flushed|patent>, site <clean|without redness>.
{MED} {DOSE} {ROUTE} <given|administered> at {TIME} for {COND} rated {N}/10; reassessed at {TIME}, now {N}/10.
<Voiding|Ambulating> without assistance; <tolerating|refusing> <diet|breakfast|fluids>.
<Family|Spouse|Daughter> at bedside<, updated on plan of care| and updated>.
Notified Dr. {LAST} of {TEST} {RESULT}; new order received for {MED} {DOSE} {ROUTE}.
Pt <refused|declined> {MED} at {TIME}, <stating|saying> it causes {COND}.
<Dressing|Bandage> to the {ANAT} changed; <scant|moderate|no> drainage noted.
Handoff given to {FIRST}, RN at {TIME}.
Thank you for <consulting|involving> us <on|regarding> this {AGE}-year-old with {COND}.
Reason for consult: <evaluation|management> of {COND} <in the setting of|complicated by> {COND}.
<Recommendations|Recs>: 1. {TEST} 2. <start|consider> {MED} {DOSE} {FREQ} 3. we will follow along.
We <agree|concur> with {MED} and would <add|consider> {MED}<.| if {TEST} remains abnormal.>
From a <renal|cardiac|neurologic> standpoint, <no contraindication to|okay to proceed with> {PROC}.
Please page with questions<; consult pager| or call> {PHONE}.
Not a candidate for {PROC} at this time given {COND}.
<Discussed with|Seen and discussed with> attending Dr. {LAST}, who agrees with the above.
PT eval: pt ambulated {N}0 feet with <rolling walker|cane|min assist|contact guard>, limited by {COND}.
Strength {N}/5 in the {ANAT}, with reduced motion at the {ANAT}.
Goals: <independent|modified independent> transfers within {N} weeks; <continue|progress> {PROC}.
Tolerated session <well|poorly>; <stopped|paused> due to {COND}<.| and {TEST} of {RESULT}.>
Recommend <home exercise program|outpatient PT> {N}x/week for {N} weeks.
<Fall|Falls> risk <high|moderate>; educated on use of <walker|cane> and <home safety|fall prevention>.
Mental status: <alert|calm|guarded>, <cooperative|irritable>, mood "<ok|down|anxious>", affect <constricted|congruent|labile>.
<Endorses|Reports> <passive|no> {COND}; denies {COND}, plan, or intent.
<Hx|History> of {N} prior psychiatric hospitalizations, last at {HOSP} in {DATE}.
Collateral from <mother|sister|roommate> {FIRST}: increasingly withdrawn over the last {N} weeks.
Sleeping {N} hours/night; appetite <decreased|fair|good>.
<Increase|Cross-taper> to {MED} {DOSE} {FREQ}; monitor for {COND}.
Safety plan reviewed; crisis line {PHONE} provided.
{TEST} score {N} today, <down|up> from {N} at intake.
{AGE}-month-old born <at term|preterm|at {N} weeks early>, brought in by <mother|father|parents> for {COND}.
<Mom|Dad|Parent> reports {N} wet diapers <today|per day> and <decreased|normal> feeding.
Immunizations <up to date|UTD|behind>; last given {DATE}.
Growth: <weight|length|head circumference> at the <5th|25th|50th|75th|90th> percentile<.|, tracking appropriately.>
Meeting developmental milestones<; no concerns per parents|>.
Attends daycare<, sick contacts at home| with several sick contacts>.
Dosed {MED} {DOSE} {ROUTE} {FREQ} (weight-based).
Father {FIRST} has {COND}; sibling <with|has> {COND}.
G{N}P{N} at {N} weeks <gestation|by LMP|by dates> presenting with {COND}.
{TEST} <reactive|reassuring|category I>; {TEST} {RESULT}.
{TEST} <appropriate for dates|{RESULT}>, <no|mild> {COND}.
<Pregnancy|Antepartum course> complicated by {COND}<, on {MED}| managed with diet>.
Delivered via {PROC} on {DATE} at {TIME}; infant weight {RESULT}.
Postpartum day {N}: lochia <appropriate|moderate|scant>, <breastfeeding|bottle feeding> <well|with difficulty>.
Rh <negative|positive>; <received|due for> {MED} at 28 weeks.
Counseled on warning signs including {COND} and {COND}.
C{N}D1 of {MED} + {MED} <given|administered|held> today<.| due to {TEST} {RESULT}.>
{COND}, stage <I|II|III|IIIB|IV>, <diagnosed|dx> {DATE} after {PROC}.
{TEST} {N}; <tolerating|struggling with> treatment.
Restaging {TEST} shows <partial response|stable disease|progression> in the {ANAT}.
Toxicities: <grade {N}|mild|no> {COND}<, grade {N} {COND}|>.
Dose-reduce {MED} to {DOSE} for {COND}.
Tumor board <recommends|recommended> {PROC} followed by {MED}.
<Goals of care|GOC> discussed with <patient|pt> and <her|his> <husband|wife|son> {FIRST}; <wishes|elects> to <continue|stop> therapy.
<Tel|Telephone> enc: pt called <re|regarding> {COND} since starting {MED}; advised to <hold|stop> it and call back in {N} days.
<Returned|Returning> call to {FIRST} at {PHONE}; <reviewed|gave> {TEST} results ({RESULT}).
Unable to reach pt; <LM|left message> <to call|asking to call> back at {PHONE}.
Spoke with <pt's|patient's> <wife|husband|daughter|son>, {NAME}, who states <she|he> has had {COND} for {N} days.
Pharmacy called re: interaction between {MED} and {MED}; <switched|changed> to {MED}.
<Advised|Instructed> to go to <ED|the nearest ED> <if|for any> {COND} or {COND}.
Rx for {MED} {DOSE} #{N}0 sent<; pt aware.| electronically.>
Triage RN note: pt reports {COND} starting at {TIME} <today|this morning>, <no|some> {COND}.
FHx: <mother|mom> – {COND} (dx age {AGE}); <father|dad> – {COND}<; siblings healthy|>.
<Maternal|Paternal> <grandmother|grandfather|aunt|uncle> with {COND}.
No family history of {COND} or {COND}.
Family hx <significant|positive> for early {COND} in <a brother|her father|his mother> at age {AGE}.
<Former|Current|Never> smoker<, {N} pack-years|, quit in {DATE}|>; <drinks|reports> {N} <drinks|beers> per week.
<Lives|Living> <alone|with spouse|with family> in {CITY}, {STATE}; <retired|works as a teacher|unemployed>.
<Denies|No> illicit drug use<; remote history of {COND}|>.
<Independent|Dependent> in ADLs; uses a <cane|walker|wheelchair> at baseline.
Sexually active with <one partner|male partners|female partners>; <uses|does not use> barrier protection.
Negative for {COND}, {COND}, and {COND} on review of systems.
No evidence of {COND} <by|per> {TEST}<; will monitor clinically|>.
? {COND} — <will|to> <discuss|clarify> with {NAME}.
Is {PROC} <still|really> indicated given <her|his> {COND}?
Could <her|his> {COND} be <related to|a side effect of> {MED}?
Unclear whether {COND} <predates|preceded> starting {MED}.
Low suspicion for {COND}; <no|will not pursue> {TEST}<| at this time>.
Clinically <doubt|unlikely> {COND}, but {TEST} <to be safe|for completeness>.
{COND} cannot be ruled out without {PROC}.
Doubt {COND}; more likely {COND} given <timing|exam|history>.
{ANAT}: <no|mild> <tenderness|deformity>, <full|limited> range of motion.
Gen: <NAD|uncomfortable|ill-appearing>. {ANAT}: <CTAB|RRR|soft, NT/ND>.
Skin: <warm|dry>, <no|scattered> {COND} over the {ANAT}.
Neuro: <A&Ox3|alert, oriented>, strength {N}/5 <throughout|in the {ANAT}>, no {COND}.
<Left|Right> {ANAT} with <healed|fresh> surgical scar from {PROC}.
Exam limited by {COND}<.|; will reassess.>
{MED} ({DOSE}) <restarted|resumed> today after {N} days held for {PROC}.
{DOSE} of {MED} given {ROUTE} at {TIME} <per protocol|by order of Dr. {LAST}>.
Of note, pt is {N} weeks out from {PROC} (at {HOSP}).
{TEST}/{TEST} <today|this AM>: {RESULT}/{RESULT}.
{COND}/{COND} — <likely|probably> <multifactorial|viral|medication-related>.
Per outside records from {HOSP} ({CITY}, {STATE}), prior {PROC} in {DATE}.
Awaiting <prior auth|insurance approval> for {MED}; bridging with {MED} {DOSE} {FREQ}.
Insurance denied {MED}<; appeal submitted.|, will try {MED} instead.>
<Counseled|Discussed> at length re: adherence to {MED}.
<Reports|States> taking {MED} only {N} days a week<.| due to {COND}.>
{FIRST} {LAST}, {AGE}, <seen|evaluated> in <clinic|consultation> for {COND} <at the request of|per referral from> Dr. {LAST}.
Dr. {LAST} <performed|will perform> {PROC} on {DATE}<.| at {HOSP}.>
{HOSP} discharge summary reviewed: {COND}<, treated with {MED}|>.
<Preop|Pre-op> checklist: {TEST} <done|pending>, consent signed, NPO since {TIME}.
NPO after midnight for {PROC} <tomorrow|on {DATE}>; hold {MED} the morning of.
<Time out|Timeout> performed at {TIME}; correct site ({ANAT}) confirmed.
Under {TEST} guidance, a <18|20|22>-gauge needle was advanced into the {ANAT}.
{N}0 mL of <clear|cloudy|bloody> fluid aspirated and sent for {TEST}<| and {TEST}>.
Post-procedure {TEST} showed no {COND}.
Wound care: keep the {ANAT} dressing <dry|on> for {N} days<; may shower after.| then remove.>
Sutures to be removed in {N} days <at|by> <PCP|clinic|{HOSP}>.
Work note: <off work|light duty> until {DATE} due to {COND}.
Driving restriction for {N} <weeks|months> following {PROC}.
Weight-bearing as tolerated on the {ANAT}<; ortho follow-up in {N} weeks|>.
<Non-weight-bearing|NWB> <left|right> {ANAT} x {N} weeks.
<Sling|Splint|Boot> to the {ANAT} for comfort.
{COND} (chronic, stable) — <no changes|continue current meds>.
{COND}: <not at goal|at goal>; {TEST} {RESULT} <today|on {DATE}>. <Add|Continue> {MED}.
{COND}, new: <will|plan to> <start|trial> {MED} {DOSE} {FREQ} and reassess in {N} weeks.
{COND} — see {NAME}'s note from {DATE}.
Health maintenance: <due for|overdue for|completed> {PROC}<, {TEST}|>.
<Vaccines|Immunizations>: {MED} given today in the <left|right> {ANAT}.
Screening: {TEST} <ordered|up to date|declined>; {PROC} <due|done> {DATE}.
Spent {N}0 minutes, more than half in counseling about {COND}.
{NAME}, a {AGE}-year-old with {COND} s/p {PROC} ({DATE}) on {MED} {DOSE} {FREQ}, now presents with {COND} and a {TEST} of {RESULT}.
After discussing {PROC} versus {PROC}, <she|he> <chose|elected> the former, scheduled on {DATE} with Dr. {LAST} at {HOSP}.
Given {COND}, {COND}, and a {TEST} of {RESULT}, we <stopped|held> {MED} and <started|switched to> {MED} {DOSE} {ROUTE} {FREQ}.
Despite {MED} {DOSE} {FREQ} and {MED}, <her|his> {COND} <persists|has progressed>, and {TEST} now shows {COND} of the {ANAT}.
Worse w/ <activity|meals|lying down>, better w/ {MED}.
Onset {DATE}. Duration {N} wks. Severity {N}/10.
Intermittent. Non-radiating. No {COND}.
Sx started ~{N} days ago; <tried|used> {MED} x{N} without change.
Pt well known to <this service|our clinic|Dr. {LAST}>, last seen {DATE}.
Meds reviewed<; no changes.| and reconciled.> {MED} <listed twice|duplicated>, removed.
Non-adherent to {MED} <x|for> {N} weeks d/t <cost|side effects|{COND}>.
{DATE}: <seen|evaluated> in clinic, {COND} <unchanged|improving>.
{TIME} — pt noted to have {COND}; rapid response called.
{HOSP} records show {TEST} {RESULT} on {DATE}.
{PROC} (<left|right> {ANAT}) <planned|performed> {DATE}.
{ANAT} exam: {COND}, no fluctuance.
{COND} <noted|seen> incidentally on {TEST} of the {ANAT}<; outpatient follow-up recommended|>.
{MED}-induced {COND}<, resolved after stopping|>.
{TEST}-guided {PROC} of the {ANAT} <performed|completed> without complication.
Hx (per pt): {COND}/{COND}/{COND}.
Meds (per pharmacy fill history): {MED}, {MED}<, {MED}|>.
{COND} (on {MED}) — <stable|flaring>.
Allergies: {MED} ({COND}); {MED} (<intolerance|unknown reaction>).
Surgical hx: {PROC} (age {AGE}), {PROC} ({DATE}).
PCP: Dr. {LAST}; <cardiologist|oncologist|nephrologist>: Dr. {LAST} at {HOSP}.
Why was {MED} stopped? Unclear from records; <will|to> clarify with Dr. {LAST}.
<Mildly|Markedly> elevated {TEST} ({RESULT}) without {COND}.
The {COND} <seems|appears> to flare <whenever|each time> <she|he> misses {MED}.
Tolerating {MED} {DOSE} {ROUTE} {FREQ} <without|with mild> {COND}.
S: <feels|feeling> <better|worse|the same>; O: {TEST} {RESULT}; A: {COND}; P: <continue|adjust> {MED}.
<Her|His> main concern today is {COND}, which interferes with <sleep|work|walking>.
Remote {PROC} <as a child|in {DATE}>; no <issues|complications> since.
Not currently taking {MED}<, despite it being on the med list|>.
""".strip().splitlines()

# Problem, medication, surgical-history, allergy and order list lines.
LIST_ITEM_MORE = r"""
{N}. {COND}
{N}) {COND} - <active|chronic|in remission>
- {MED} {DOSE} {ROUTE} {FREQ} #30 RF<0|1|2|3>
{MED} {DOSE} <tab|cap> - take {N} {ROUTE} {FREQ}, disp #{N}0, refills: {N}
[x] {TEST}
[ ] {TEST}<| - due {DATE}>
[x] {PROC} completed {DATE}
{COND} (ICD-10 <pending|on file>)
{COND}; onset {DATE}
{PROC}, <left|right|bilateral> {ANAT} - age {AGE}
{PROC} @ {HOSP}, {DATE}
{PROC} {DATE} (Dr. {LAST})
{MED}: {COND}
{MED} → {COND}
{MED} (<severe|moderate|mild>): {COND}
NKA; intolerance to {MED}
Order: {TEST} <STAT|routine|AM draw>
Order: {MED} {DOSE} {ROUTE} x1 <now|STAT>
{TEST} {FREQ} x {N}
Consult: {PROC}
Diet: <NPO|clears|cardiac>; Activity: <OOB|bed rest|ad lib>
{MED} infusion at {DOSE}/hr, titrate to {TEST} {RESULT}
PRN: {MED} {DOSE} {ROUTE} {FREQ} for {COND}
{COND} — <resolved|inactive> ({DATE})
{COND}, <unspecified|uncomplicated|with complications>
{COND} <w/|with> {COND}
{COND} 2/2 {COND}
{COND} on {MED} + {MED}
{MED} {DOSE} {ROUTE} {FREQ}, start {DATE}, stop {DATE}
{MED} {DOSE} {ROUTE} {FREQ} <— HOLD|— on hold|[held]>
{MED} <discontinued|d/c'd> {DATE} (<ineffective|{COND}>)
{MED}, {DOSE}, {ROUTE}, {FREQ}, <active|inactive>
• {MED} {DOSE} {FREQ} (since {DATE})
* {COND} (<primary|secondary>)
Dx {N}: {COND}
Problem: {COND}  Status: <active|resolved>  Onset: {DATE}
{ANAT} {COND}
{COND} of {ANAT}, <left|right>
{PROC} x{N}
Last {PROC}: {DATE}<, normal|, {COND}>
Vaccine: {MED} ({DATE})
Inj {MED} {DOSE} {ROUTE} {FREQ}<, next due {DATE}|>
{MED} {DOSE} {ROUTE} {FREQ} (Rx by Dr. {LAST})
{MED} {DOSE}, {N} refills, last filled {DATE}
{TEST}: due {DATE}
Referral: {PROC} at {HOSP}
{COND} [<chronic|acute>]
{COND} — <mother|father|sibling>
{COND}/{COND}
{PROC} <c/b|complicated by> {COND}
OTC: {MED} {DOSE} (self-directed)
{MED} {DOSE}: {N} tab(s) {ROUTE} {FREQ} with food
Sig: {DOSE} {ROUTE} {FREQ} <x {N} days|until gone|prn {COND}>
{MED}-{MED} {DOSE}/{DOSE} combo, {ROUTE} {FREQ}
Transfuse {N} units; premedicate with {MED} {DOSE} {ROUTE}
{N}. {PROC} - {DATE} - {HOSP}
Allergy: {MED} / reaction: {COND} / severity: <high|low>
<Active|Current> problem: {COND} (since {DATE})
{MED} <ER|XL|SR> {DOSE}<, do not crush|, swallow whole>
[x] {MED} {DOSE} {ROUTE} {FREQ} reviewed
""".strip().splitlines()

# Lab, vital-sign and imaging result lines.
LAB_MORE = r"""
{TEST} {RESULT} {TEST} {RESULT} {TEST} {RESULT} {TEST} {RESULT}<| on RA| on {N}L NC>
{TEST} {RESULT}	{TEST} {RESULT}	{TEST} {RESULT}
{TEST}	{RESULT}	<H|L|>	{RESULT}
{TEST}......{RESULT}  H
↑ {TEST} {RESULT}<| (rising)>
↓↓ {TEST} {RESULT}, <falling|down-trending> since {DATE}
{TEST} {RESULT} [ref {RESULT}]
{TEST}: {RESULT} (H) [{RESULT}]
{TEST} {RESULT} → {RESULT} → {RESULT}
{DATE} {TIME}  {TEST}  {RESULT}  <final|prelim|corrected>
{TEST} / {TEST} / {TEST}: {RESULT} / {RESULT} / {RESULT}
{TEST}: <neg|negative|not detected|positive|detected>
{TEST} <POS|NEG>
{TEST}: {RESULT}, recheck {RESULT} at {TIME}
{TEST} {ANAT}: <no acute process|unremarkable|{COND}>
{TEST} {ANAT} ({DATE}): {COND}; no {COND}.
{TEST} of {ANAT} - IMPRESSION: {COND}, <unchanged|new|improved>.
{TEST}: {TEST} {RESULT}, <mild|moderate|no> {COND}
{TEST} {RESULT} (goal {RESULT})
{TEST} hemolyzed, <redraw|recollect> ordered
{TEST}: {RESULT} - <critical|panic> - read back verified at {TIME}
Pain {N}/10, {TEST} {RESULT}, {TEST} {RESULT}
Orthostatics: lying {RESULT} / sitting {RESULT} / standing {RESULT}
Tmax {RESULT}, Tcurrent {RESULT}
{TEST} {TIME}: {RESULT}; {TIME}: {RESULT}
{TEST}:{RESULT}; {TEST}:{RESULT}; {TEST}:{RESULT}
{TEST} - {RESULT} - <normal|abnormal|borderline>
{RESULT} ({TEST}, {DATE})
{TEST} <increased|decreased> to {RESULT} from {RESULT}
{TEST}  {RESULT}  <*H*|*L*|*C*>
{TEST} {RESULT} <HH|LL><| (critical)>
{TEST}: {RESULT}; {TEST}: {RESULT} (<fasting|random|non-fasting>)
Urine: {TEST} <negative|trace|1+|2+>, {TEST} {RESULT}
{TEST}: no growth <at {N} days|to date|x {N} days>
{TEST} (<arterial|venous>): {RESULT}/{RESULT}/{RESULT}
{TEST} read: {COND}<, new since {DATE}|>
{TEST} {ANAT} (non-enhanced): <negative|no acute abnormality>
{TEST} {ANAT}: {N} mm {COND}, <stable|increased|new>
<L|R> {ANAT} {TEST}: {COND}
{TEST} - {COND} (<mild|moderate|severe>)
Path ({ANAT}): {COND}<, margins negative|, margins involved|>
{TEST} {RESULT} @ {TIME}
{TEST}	{RESULT}	{DATE}
{TEST} ({DATE}): {RESULT}   ({DATE}): {RESULT}
{TEST} {RESULT} (baseline {RESULT})
{TEST} {RESULT} on {N}L <NC|by nasal cannula|via HFNC>
{TEST} {N}, pupils <equal|reactive|sluggish>
{TEST} — <within normal limits|WNL>; {TEST} — {RESULT}
{TEST} (<POC|point of care>) {RESULT}
{TEST}	{RESULT}	(ref {RESULT})
{TEST}, {TEST}: <WNL|unremarkable>
{TEST} {RESULT} ({DATE}) vs {RESULT} ({DATE})
{TEST}: {RESULT} {RESULT} {RESULT} (last 3)
{ANAT} {TEST}: <no|trace|small> {COND}<, stable|>
{TEST} {RESULT}* <(repeat pending)|(verified)|>
""".strip().splitlines()

# Header / form lines: demographics, face sheets, lab headers, fax covers,
# referral forms, insurance cards, discharge paperwork, prescription headers.
HEADER_MORE = r"""
PATIENT:	{LAST}, {FIRST}	DOB:	{DATE}
<Med. Rec. #|Chart No.|Patient ID|Hosp No|Unit No.|UR No.>: {MRN}
<Visit #|Encounter No.|Enc. ID|CSN>: {ACCT}   <Adm. date|Admit dt>: {DATE}
<Policy No.|Group #|Subscriber ID|Plan ID> - {ACCT}
<F:|Fax #|Facsimile:|FAX NO.|Fax no:> {FAX}
<P:|Home #|Mobile no.|Callback:|Day phone:|Cell #> {PHONE}
<Postcode|Zip/Postal|ZIP/POSTAL CODE|post code>: {ZIP}
name: {FIRST} {LAST} / dob: {DATE} / mrn: {MRN}
FACE SHEET - {HOSP} - printed {DATE} {TIME}
Surname: {LAST} ; Given name: {FIRST} ; <Sex|Gender>: <F|M|X|U>
FAMILY NAME / FIRST NAME: {LAST} / {FIRST}
Pt: {LAST}, {FIRST}  #{MRN}
Patient ID # {MRN}  <Visit|Encounter> # {ACCT}
DOB {DATE} ; Age {AGE} <y|yrs|yo|years>
Res. address: {ADDRESS}, {CITY}, {STATE}  {ZIP}
Street: {ADDRESS} / City: {CITY} / State: {STATE} / Zip: {ZIP}
CITY/STATE/ZIP: {CITY} {STATE} {ZIP}
Town/City - {CITY} ; County/State - {STATE}
Lab visit #: {ACCT}   COLLECTED: {DATE} {TIME}   RECEIVED: {DATE} {TIME}
Ordering MD: Dr. {FIRST} {LAST}<| (NPI on file)>
Performing site: {HOSP} ({CITY}, {STATE})
<Lab director|Medical director|Pathologist>: {FIRST} {LAST}, MD<, PhD|>
Collected {DATE} @ {TIME} / Reported {DATE} @ {TIME}
Report status: <FINAL|PRELIMINARY|CORRECTED|AMENDED>   Printed: {DATE} {TIME}
TO: {NAME}   FROM: {NAME}
Attn: Dr. {LAST}   Fax #: {FAX}   Phone #: {PHONE}
From: {HOSP} <Medical Records|Referral Office|Scheduling|Utilization Review>  Fax: {FAX}
Date sent: {DATE}  Time: {TIME}  Pages (incl. cover): {N}
Re: {LAST}, {FIRST} - DOB {DATE}
Sender callback #: {PHONE}
Return fax to: {FAX} Attn: {FIRST} {LAST}
No. of pages: {N} ; Sent by: {FIRST} {LAST}
Requesting facility: {HOSP}, {CITY} - Fax {FAX}
CONFIDENTIAL - intended for {NAME} only
Referring provider: {FIRST} {LAST}, <MD|DO|NP|PA>  Tel {PHONE}  Fax {FAX}
Referred to: {HOSP} - <Cardiology|Dermatology|Orthopedics|Neurology|Sleep Medicine>
Reason for referral: {COND}<| of the {ANAT}>   Urgency: <Routine|Urgent|STAT>
Requested appt by: {DATE}   Patient callback: {PHONE} (<cell|home|work>)
<Insurance auth #|Referral #|Auth. No.>: {ACCT}   Valid through: {DATE}
Authorization No. {ACCT}, {N} visits approved
MEMBER: {FIRST} {LAST}
MEMBER ID {ACCT}   GROUP {ACCT}
Subscriber: {NAME}   Relationship: <Self|Spouse|Child|Other>
Dependent: {FIRST} {LAST}   DOB {DATE}
<Eff. date|Effective>: {DATE}   <Termination|Exp.>: {DATE}
Customer service: {PHONE}   Provider inquiries: {PHONE}
Member services {PHONE} / Plan website: {URL}
Rx Group: {ACCT}   Member #: {ACCT}
Primary subscriber: {LAST}, {FIRST}   ID {ACCT}
Primary ins. policy # {ACCT} ; Secondary ins. policy # {ACCT}
Policy holder: {NAME}   Holder DOB: {DATE}   Holder SSN: {SSN}
DISCHARGE SUMMARY - {HOSP}
Admitted: {DATE}   Discharged: {DATE}   LOS: {N} days
Discharging physician: Dr. {FIRST} {LAST}
Discharge disposition: <Home|Home with services|SNF|Rehab> - {ADDRESS}, {CITY}
Follow-up with: Dr. {LAST} on {DATE} at {TIME}
Discharge diagnosis: {COND}; secondary: {COND}
DISCHARGE INSTRUCTIONS FOR: {FIRST} {LAST}   MRN: {MRN}
Questions after discharge? Nurse line {PHONE}
Rx for: {NAME}   DOB: {DATE}   Age: {AGE}
Prescriber: {FIRST} {LAST}, <MD|DO|NP|PA-C>   Prescriber ph: {PHONE}
Prescriber address: {ADDRESS}, {CITY}, {STATE} {ZIP}
Dispense at: {PHARM}, {ADDRESS}
Sig: {MED} {DOSE} {ROUTE} {FREQ}   Refills: {N}   Date written: {DATE}
Pharmacy ph: {PHONE} ; Pharmacy fax: {FAX}
Pharmacy on file - {PHARM} - {PHONE}
Patient name/address: {NAME}, {ADDRESS}, {CITY} {ZIP}
Preferred contact: <text|call|email> - {PHONE}
Secondary phone: {PHONE}   e-mail/portal login: {EMAIL}
Email address - {EMAIL}
<Soc. Sec. No.|SS #|Social Sec #|SOC SEC>: {SSN}
PT NAME {LAST}, {FIRST}   SEX <F|M>   AGE {AGE}
HOSP NO {MRN}   ADM {DATE}   ATTENDING {LAST}, {FIRST} MD
Name	{FIRST} {LAST}	MRN	{MRN}
Callback	{PHONE}	Email	{EMAIL}
DOB	{DATE}	Age	{AGE}
Guardian/POA: {NAME} - {PHONE} - {EMAIL}
NOK: {FIRST} {LAST} (<spouse|parent|child|partner>) ; tel {PHONE}
{ADDRESS} / {CITY} / {STATE} / {ZIP}
Chart No. {MRN} / Visit # {ACCT} / Rm {N}
Hosp No: {MRN} ; Encounter No.: {ACCT} ; Admit: {DATE}
pt id: {MRN}   acct: {ACCT}
Patient: {NAME}   Age/Sex: {AGE} / <F|M>
Patient Label: {LAST}, {FIRST} * {MRN} * {DATE}
Bill to: {NAME}, {ADDRESS}, {CITY} {STATE} {ZIP}
Statement date: {DATE}   Due: {DATE}   Acct: {ACCT}
Clinic: {HOSP}  Tel: {PHONE}  Web: {URL}
Date of injury: {DATE}  Claim No.: {ACCT}
Employer contact: {FIRST} {LAST}  {PHONE}
Date/Time of admission: {DATE} {TIME}
Arrival: {DATE} {TIME} via <EMS|walk-in|private vehicle>
PCP on record: {FIRST} {LAST}, <MD|NP>, {HOSP} ; ph {PHONE}
Resp. party phone: {PHONE}  Resp. party email: {EMAIL}
Birthdate - {DATE} - Age - {AGE}
PATIENT ID# {MRN}    DOS {DATE}    PROVIDER {LAST}, {FIRST}
Cell: {PHONE} ; Work: {PHONE} ; Email: {EMAIL}
Tel. (H) {PHONE}   Tel. (W) {PHONE}
ph/fax {PHONE} / {FAX}
T {PHONE}  F {FAX}  E {EMAIL}
Admitting MD: {LAST}   Attending MD: {LAST}
Health care proxy: {NAME} ({PHONE}) ; POLST <on file|not on file>
Advance directive on file: <yes|no>   Agent: {FIRST} {LAST}
Previous address: {ADDRESS}, {CITY}, {STATE}
Temporary address: c/o {NAME}, {ADDRESS}, {CITY}
Encounter No.: {ACCT}   Enc. date: {DATE}   Loc: {HOSP}
Consult requested by: {NAME} ; Date requested: {DATE} ; Callback: {PHONE}
mrn {MRN} / csn {ACCT} / dob {DATE}
patient: {LAST} {FIRST} ; d.o.b {DATE} ; sex <f|m>
AGE: {AGE} YRS   SEX: <FEMALE|MALE>   DOB: {DATE}
Specimen: <Blood|Urine|Serum|Plasma>   Test: {TEST}   Result: {RESULT}   Pt: {LAST}, {FIRST}
""".strip().splitlines()

# Administrative / contact sentences.
ADMIN_MORE = r"""
Your appointment with Dr. {LAST} is <confirmed|booked|set> for {DATE} at {TIME}<.|; please arrive early.>
<To reschedule|To cancel>, call {PHONE} at least a day ahead<.| or reply to this text.>
This is a reminder for {FIRST}: <lab draw|follow-up visit|imaging> on {DATE} at {HOSP}.
Hello, this message is for {FIRST} {LAST}; please return our call at {PHONE}<.| regarding your recent visit.>
<We are calling from|This is> {HOSP} <about|regarding> <an appointment|your test results|a billing matter>, call back at {PHONE}.
Hi, this is {FIRST} from the <front desk|billing office|scheduling team> at {HOSP}, please call us at {PHONE}.
Your balance on account {ACCT} is past due<.|; pay online at {URL}.>
Payments can be mailed to {HOSP}, attn billing, {ADDRESS}, {CITY}, {STATE} {ZIP}.
A payment plan was <set up|arranged> for {NAME} under account {ACCT} on {DATE}.
Insurance <denied|rejected> the claim for visit {ACCT}; <patient|pt> notified by phone at {PHONE}.
Prior auth for {MED} <submitted|approved|pending> under member ID {ACCT} on {DATE}.
<Per|Called> the insurer, policy {ACCT} <was|is> <active|inactive|terminated> as of {DATE}.
Coverage verified for {FIRST} {LAST}, group {ACCT}, effective {DATE}.
Records request received from {HOSP} for {NAME}, DOB {DATE}; <sent|faxed> to {FAX} on {DATE}.
Authorization to release information to {NAME} at {ADDRESS}, {CITY}, {STATE} {ZIP} <signed|on file> {DATE}.
<The patient|Pt> <authorizes|permits> disclosure to <her|his> <attorney|employer|spouse> {FIRST} {LAST}, <phone|tel> {PHONE}.
Release of information <expires|is valid until> {DATE}<.|; revocable in writing.>
Copies of <imaging|the chart|labs> were <mailed|burned to disc and mailed> to {ADDRESS} on {DATE}.
HIM <staff|clerk> {FIRST} {LAST} <processed|logged> the request under MRN {MRN}.
Please allow <several|{N}> business days; questions to {EMAIL} or fax {FAX}.
<Your|The> prescription for {MED} is ready for pickup at {PHARM}<.|, {ADDRESS}.| since {DATE}.>
{PHARM} <called|faxed> to clarify the {MED} {DOSE} order for {NAME}.
<Transferred|Moved> <her|his> prescriptions from {PHARM} to {PHARM} per request.
Pharmacist {FIRST} at {PHARM} ({PHONE}) <reports|says> {MED} is on backorder.
Mail-order refill shipped to {ADDRESS}, {CITY} {ZIP} on {DATE}.
Wheelchair van <scheduled|booked> for a {TIME} pickup at {ADDRESS} on {DATE}.
The driver will call {PHONE} <when|about ten minutes before> arriving.
Ride confirmation {ACCT} for the trip to {HOSP} on {DATE}.
<Family|Patient> requested transfer of care to Dr. {LAST} at {HOSP} in {CITY}.
Care coordinator {FIRST} {LAST} <will call|plans to call> the <family|patient> at {PHONE} <tomorrow|this week>.
<Home health|Hospice> <intake|referral> faxed to {FAX}; agency contact {NAME}, {PHONE}.
DME order for <a walker|a hospital bed|home oxygen> to be delivered to {ADDRESS}, {CITY}, {STATE}.
<Spoke|Talked> with <her|his> <daughter|son|caregiver> {FIRST}, who <confirmed|agreed to> the visit on {DATE}.
Patient <no-showed|missed> the appointment on {DATE}; letter sent to {ADDRESS}.
<Unable to reach|Could not reach> {FIRST} at {PHONE}; <number disconnected|no voicemail set up>.
<Updated|Changed> <preferred|primary> phone from {PHONE} to {PHONE} per patient.
Email on file <changed|updated> to {EMAIL} on {DATE}.
New address <entered|recorded>: {ADDRESS}, {CITY}, {STATE} {ZIP}; old address removed.
Portal proxy access granted to {NAME} (<mother|father|guardian|spouse>) on {DATE}.
Your portal activation code was sent to {EMAIL}<.|; log in at {URL}.>
Reply STOP to opt out of texts from {HOSP}<.|, or call {PHONE}.>
Reminder: <fasting is required|bring your insurance card|arrive early> for your visit with {FIRST} {LAST}, <NP|PA-C|MD> on {DATE}.
<Check-in|Registration> opens at {TIME}; <parking|the entrance> is at {ADDRESS}.
Telehealth visit for {NAME} at {TIME} on {DATE}; join at {URL}.
Interpreter services <booked|requested> for {FIRST} {LAST} on {DATE}, MRN {MRN}.
Work status form for {NAME} faxed to the employer at {FAX}, attn {FIRST}.
Disability paperwork for claim {ACCT} <completed|signed> by Dr. {LAST} on {DATE}.
School form for {FIRST}, age {AGE}, <mailed|emailed> to {EMAIL}.
<Patient|Pt> <requests|asks> that results be sent only to {ADDRESS}, not the home address.
Do not leave messages at {PHONE}; use <cell|mobile> {PHONE} only.
Demographics <verified|reviewed> at the front desk: {NAME}, {DATE}, {ADDRESS}.
Duplicate chart found; MRN {MRN} merged into MRN {MRN} on {DATE}.
Statement returned as undeliverable from {ADDRESS}, {CITY}.
Collections notice for account {ACCT} sent to {NAME} on {DATE}.
Refund of copay issued to {FIRST} {LAST}, account {ACCT}.
Lab kit shipped to {NAME}, {ADDRESS}, {CITY}, {STATE} {ZIP}; tracking available at {URL}.
Outside {TEST} results received from {HOSP} by fax ({FAX}) and scanned to chart {MRN}.
Referral to {HOSP} <placed|sent> on {DATE}; they will contact <her|him> at {PHONE}.
Peer-to-peer review with the plan medical director set for {DATE} at {TIME}; dial-in {PHONE}.
Case {ACCT} opened with the insurer to appeal {MED} coverage.
<Caller|The caller> identified <herself|himself> as {FIRST} {LAST}, the <patient's|pt's> <sister|brother|neighbor>.
Calls from {PHONE} should be routed to the care team for {NAME}.
Please have {FIRST} bring <her|his> photo ID and the card with member number {ACCT}.
Ambulance bill for the trip on {DATE} forwarded to {ADDRESS}, {CITY}.
Vaccine record for {FIRST} {LAST} (DOB {DATE}) emailed to {EMAIL} at the parent's request.
{FIRST}, please call {HOSP} back at {PHONE} about your {TEST}<.| when you get this.>
Scheduling note: {NAME} prefers <mornings|afternoons|late appointments>, best number {PHONE}.
<Her|His> <son|daughter|wife|husband> {FIRST} {LAST} is listed as <healthcare proxy|emergency contact> with email {EMAIL}.
""".strip().splitlines()

# Letters: referral, discharge, sick/school/work notes, consult replies.
LETTER_MORE = r"""
Dear Dr. {LAST} and colleagues,
Dear <Mr.|Ms.|Mrs.|Mx.> {LAST},
Hello Dr. {LAST},
Dear Parent or Guardian of {FIRST} {LAST},
To the <school nurse|employer|human resources department> of {NAME},
Re: referral of {LAST}, {FIRST}; DOB {DATE}; chart {MRN}
Thank you for asking me to see {FIRST} {LAST} in consultation on {DATE}.
Many thanks for your letter of {DATE} about {NAME}.
I reviewed {FIRST} at {HOSP} on {DATE} for {COND}.
{NAME} was admitted to {HOSP} on {DATE} and discharged home on {DATE}.
This is to certify that {NAME} was seen in our <clinic|office|emergency department> on {DATE}.
<She|He> <may|can> return to <work|school|sports> on {DATE}<.| without restrictions.| with light duties.>
Please excuse {FIRST} from <school|work|class|gym> from {DATE} to {DATE} due to <illness|a medical condition|{COND}>.
{FIRST} is {AGE} years old and <needs|requires> {MED} at school {FREQ}.
<She|He> should be excused from <PE|heavy lifting|night shifts> for {N} weeks.
In summary, {FIRST} has {COND} and I have started {MED} {DOSE} {FREQ}.
I have asked <her|him> to see <her|his> GP, Dr. {LAST}, in {N} weeks.
I would be grateful if you could review <her|his> {MED} at <her|his> next visit.
I enclose a copy of the {TEST} report dated {DATE}.
A copy of this letter goes to <her|his> <cardiologist|nephrologist|oncologist>, Dr. {FIRST} {LAST}.
cc: {NAME}, <patient|parent|guardian>; Dr. {LAST}, <GP|PCP>
CC: Medical Records, {HOSP} (fax {FAX})
Copy mailed to the patient at {ADDRESS}, {CITY} {ZIP}
<Yours truly|Cordially|Respectfully|With thanks>,
{FIRST} {LAST}, <RN, BSN|NP-C|PA-C|MSN, FNP-BC|LCSW>
Dr. {FIRST} {LAST}, <Consultant Physician|Attending Surgeon|Staff Psychiatrist|Specialty Registrar>
{FIRST} {LAST}, MD, <FACC|FACP|FACS|PhD>
pp. Dr. {LAST} (dictated but not read)
Dictated by Dr. {LAST}; typed by {FIRST} {LAST} on {DATE}
{HOSP} - Department of <Pediatrics|Neurology|Orthopaedics|Geriatrics> - {ADDRESS}, {CITY}, {STATE} {ZIP}
Switchboard {PHONE} / Secure email {EMAIL}
{URL} ; {PHONE}
{CITY}, {DATE}
Should you have any questions, my <secretary|assistant> {FIRST} can be reached on {PHONE}.
If <her|his> symptoms recur, please re-refer to our clinic via fax {FAX}.
<Her|His> <mother|father|wife|husband>, {FIRST}, was present and agrees with the plan.
<She|He> lives with <her|his> <partner|daughter|son> in {CITY} and is independent at home.
Discharge medications were sent electronically to {PHARM}.
<Follow-up|Review> has been <arranged|booked> with Dr. {LAST} at {HOSP} on {DATE}.
Reason for referral: {COND} not responding to {MED}.
I would appreciate an appointment for {FIRST} within {N} weeks; <she|he> can be reached at {PHONE}.
Thank you for your reply of {DATE} regarding <Mr.|Mrs.|Ms.> {LAST}.
In reply to your consult request, I saw {NAME} (MRN {MRN}) on the ward today.
Please find attached <her|his> discharge summary from {HOSP}.
With kind regards and thanks for your ongoing care of {FIRST},
{FIRST} {LAST} attended <her|his> appointment at {TIME} on {DATE}.
Please contact me directly at {EMAIL} if you need further information about {FIRST}.
""".strip().splitlines()

# Informal patient / family portal and SMS messages.
MESSAGE_MORE = r"""
hi its {FIRST} {LAST} dob {DATE} can u pls call me back
my son is {AGE} and has had {COND} since <yesterday|last nite|this am> what do i do
my daughter {FIRST} is {AGE} <n|and> her {ANAT} <hurts|is swollen> pls advise
hey pls send my {MED} to {PHARM} on {ADDRESS} thx
<new|my new> # is {PHONE} <pls update|thx|ty>
cant make it {DATE} can we do another day
<omg|ugh> the {MED} is making me so <sick|dizzy|tired> 😩
thx dr {LAST} 🙏
this is {FIRST} texting for my husband {FIRST} he cant find his {MED}
wifes cell is {PHONE} call her if u cant reach me
hi r my {TEST} results back yet
did u get the fax from {HOSP}? they said they sent it {DATE}
my email changed its {EMAIL} now
pls mail the bill to {ADDRESS} {CITY} {STATE} {ZIP} not the old address
i think i got the wrong dose {DOSE} of {MED} from {PHARM} ??
can my mom {FIRST} pick up my rx she is on my list
grandpa is {AGE} n keeps falling can someone call {PHONE}
hey its me again lol still got the {COND}
my insurance # is {ACCT} they said u need it
pls send the school note to {EMAIL} thx so much
whats the fax # for ur office my lawyer needs it
my kid {FIRST} {LAST} has appt {DATE} at {TIME} can i come in w him
i moved!! new addy {ADDRESS}, {CITY}
{PHARM} says they never got the script?? can u resend
pharmacy # is {PHONE} if u need to call them
took {MED} {DOSE} at {TIME} still no relief
bp {RESULT} this am is that ok
sry forgot my mrn its {MRN} i think
my dad {FIRST} {LAST} was admitted to {HOSP} last nite can u talk to his drs
i dont have a car can someone pick me up at {ADDRESS}
my ssn is {SSN} for the form u asked for
ok thx see u {DATE} 👍
hello this is the mom of {FIRST}, she is {AGE} and has {COND} again
can u email me at {EMAIL} instead of calling i work nights
the link {URL} isnt working for my video visit
im at {HOSP} er now they want to do {PROC} is that ok
hi doc my {ANAT} is still <sore|hurting> after the {PROC} 😕
stopped {MED} bc of {COND} hope thats ok
my twins {FIRST} and {FIRST} both have {COND} now 🤒
text my sister {FIRST} at {PHONE} shes driving me
can i get a refill on {MED} {DOSE}? i use {PHARM} in {CITY}
wrong # on my chart its {PHONE} not the other one
need a work note for {DATE} to {DATE} pls
who is dr {LAST}? i got a letter from them
ok i called {PHONE} but no one answered
yes my dob is {DATE}
r u guys open {DATE}
got the bill acct {ACCT} but insurance shud cover it??
my boyfriend {FIRST} {LAST} can get my results its ok w me
i live in {CITY} {STATE} now is there a clinic closer
can u send my records to dr {LAST} at {HOSP} fax {FAX}
temp {RESULT} n {COND} since {DATE}
my mom {FIRST} is {AGE} and confused since starting {MED}
hi im {AGE} can i still get the {PROC}
grandson {FIRST} ({AGE}) is helping me type this
plz dont call my work # {PHONE} use my cell
the {PHARM} by my house closed can u send it to the one on {ADDRESS}
im the caregiver for {FIRST} {LAST}, my # is {PHONE}
just checking if my {TEST} on {DATE} needs fasting
k thx {FIRST}
best way to get me is {EMAIL} or text {PHONE} anytime
my zip is {ZIP} for the mail order
husband says hi to dr {LAST} lol 😊
sent the pic of my {ANAT} to {EMAIL} did u get it
{FIRST} here, {AGE} yo, been coughing for {N} days w {COND}
my baby is {AGE} months and wont stop crying since the shots ❤️ pls help
ur nurse {FIRST} said to msg here about my {MED} {DOSE}
""".strip().splitlines()

POOLS = {
    "NARRATIVE": NARRATIVE_MORE,
    "HEADER": HEADER_MORE,
    "ADMIN": ADMIN_MORE,
    "LETTER": LETTER_MORE,
    "MESSAGE": MESSAGE_MORE,
    "LIST_ITEM": LIST_ITEM_MORE,
    "LAB": LAB_MORE,
}
