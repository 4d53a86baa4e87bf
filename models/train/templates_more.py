"""Later editions of the templates (the second and third were written in the
project's third session): new sentence shapes for every pool, in the syntax of
templates.py. templates.EDITIONS keeps the editions apart, and each is split into
train and held-out templates on its own. Some lines hold literal tab characters.
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
# FEN: <regular|renal|clear liquid> diet, replete {MED} <{FREQ=prn}|per protocol>.
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
Repositioned {FREQ}; {ANAT=skin} over the {ANAT} <intact|reddened, non-blanchable>.
Peripheral line in the {ANAT} <flushed|patent>, site <clean|without {COND=redness}>.
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
Recommend <{PROC=home exercise program}|outpatient {PROC=PT}> {N}x/week for {N} weeks.
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
Growth: <{TEST=weight}|{TEST=length}|{TEST=head circumference}> at the <5th|25th|50th|75th|90th> percentile<.|, tracking appropriately.>
Meeting developmental milestones<; no concerns per parents|>.
Attends daycare<, sick contacts at home| with several sick contacts>.
Dosed {MED} {DOSE} {ROUTE} {FREQ} (weight-based).
Father {FIRST} has {COND}; sibling <with|has> {COND}.
G{N}P{N} at {N} weeks <gestation|by LMP|by dates> presenting with {COND}.
{TEST} <reactive|reassuring|category I>; {TEST} {RESULT}.
{TEST} <appropriate for dates|{RESULT}>, <no|mild> {COND}.
<Pregnancy|Antepartum course> complicated by {COND}<, on {MED}| managed with diet>.
Delivered via {PROC} on {DATE} at {TIME}; infant {TEST=weight} {RESULT}.
Postpartum day {N}: lochia <appropriate|moderate|scant>, <breastfeeding|bottle feeding> <well|with difficulty>.
{TEST=Rh} <negative|positive>; <received|due for> {MED} at 28 weeks.
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
{ANAT}: <no|mild> <{COND=tenderness}|{COND=deformity}>, <full|limited> range of motion.
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
{ANAT} exam: {COND}, no {COND=fluctuance}.
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
Order: {MED} {DOSE} {ROUTE} {FREQ=x1} <now|STAT>
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
{TEST=Orthostatics}: lying {RESULT} / sitting {RESULT} / standing {RESULT}
{TEST=Tmax} {RESULT}, {TEST=Tcurrent} {RESULT}
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
{TEST} {N}, {ANAT=pupils} <equal|reactive|sluggish>
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
{TEST=bp} {RESULT} this am is that ok
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
{TEST=temp} {RESULT} n {COND} since {DATE}
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

SECOND = {
    "NARRATIVE": NARRATIVE_MORE,
    "HEADER": HEADER_MORE,
    "ADMIN": ADMIN_MORE,
    "LETTER": LETTER_MORE,
    "MESSAGE": MESSAGE_MORE,
    "LIST_ITEM": LIST_ITEM_MORE,
    "LAB": LAB_MORE,
}


# ---- Third edition ----------------------------------------------------------

NARRATIVE_MORE3 = r"""
Overnight events: <none|brief episode of {COND} at {TIME}|new {COND} requiring a bolus of {MED}>.
Remains on {MED} at {DOSE}<, weaning as tolerated|, unable to wean|; goal to be off by morning>.
{TEST} {RESULT}, {TEST} {RESULT} on current settings; <will|plan to> attempt {PROC} <today|this afternoon|after rounds>.
<Sedated|Comfortable> on {MED} and {MED}; {TEST} goal {RESULT}.
Failed {PROC} this morning because of {COND}<.|; retry tomorrow.>
<Net|Overall> fluid balance <positive|negative|even> over {N} days; {TEST} now {RESULT}.
Hemodynamic support <down-trending|escalating|stable>: {MED} {DOSE} plus {MED} {DOSE}.
Lines: {PROC} (day {N}), {PROC} (day {N}); <all|both> sites clean.
Day {N} of {MED} for {COND}; source <controlled|not yet identified|unclear>.
Transitioned to {PROC} at {TIME} and tolerating well, {TEST} {RESULT}.
{TEST} <positive|negative>; {COND} managed with <reorientation|{MED}> and sleep hygiene.
Critically ill with {COND} and {COND}; high risk of <deterioration|death> without ICU-level care.
Critical care time, excluding procedures: {N}0 minutes.
<Plan|Goal> for today: lighten {MED}, diurese with {MED}, and <trial|consider> {PROC}.
<Physical status|PS class> <II|III|IV|IIIE>; airway {TEST} <I|II|III|IV>, mouth opening adequate.
Last oral intake at {TIME}<; meets fasting guidelines| — case delayed {N} hours>.
Induction: {MED} {DOSE}, {MED} {DOSE}, {MED} {DOSE}; {PROC} on first attempt.
Maintenance with {MED}<, supplemented by {MED}| and {MED} infusion|>; {TEST} kept above {RESULT}.
Prior anesthetic complications: <none|{COND} after {PROC}|family history of {COND}>.
Adjunct: {PROC} under {TEST} guidance with {DOSE} of {MED}.
Emergence <smooth|delayed|complicated by {COND}>; transferred to <PACU|the ICU> <on room air|with {PROC} in place>.
Prophylaxis for {COND}: {MED} {DOSE} and {MED} {DOSE}.
Difficult airway <anticipated|not anticipated> given {COND} and a <short|thick> {ANAT}.
<Gross description|Grossly>: received fresh, labeled with the patient's name and "{ANAT}", consisting of a tan-pink tissue fragment.
<Microscopic|Histologic> sections show {COND} with <focal|extensive|no> {COND}.
<Final diagnosis|DIAGNOSIS>: {ANAT}, {PROC}: {COND}.
<Deep|Peripheral|Inked> margin <free of|involved by|close to> {COND}<; closest distance {RESULT}.|.>
{N} of {N} {ANAT} positive for {COND}.
{TEST} <supports|does not support> {COND}; <controls|internal controls> reacted appropriately.
<Comment|Note>: findings <favor|raise the possibility of> {COND}; <clinical correlation|correlation with {TEST}> recommended.
Case reviewed in intradepartmental consultation with Dr. {LAST}, who concurs.
Intraoperative <diagnosis|consultation> "{COND}" called to the OR at {TIME}.
No {COND} identified in the {ANAT}<.|; see comment.>
Wound on the {ANAT} measures {RESULT} x {RESULT} x {RESULT}, <no|minimal> tunneling.
<Wound bed|Base> <pink and granular|clean|with {COND}>; edges <attached|rolled|undermined>.
Periwound <intact|erythematous|indurated>; {COND} <present|absent> at the {ANAT}.
<Stage|Category> {N} {COND} over the {ANAT}, present on admission: <yes|no>.
Cleansed with {MED}, {MED} applied to the base, covered with a foam dressing; change {FREQ}.
{PROC} <placed|changed|discontinued> to the {ANAT} wound; seal <intact|leaking>.
<Offloading|Pressure relief> reinforced; turning schedule posted at bedside.
<Exudate|Drainage>: <small|moderate|large>, <serous|serosanguinous|purulent>, <no|mild> odor.
Healing <on track|stalled>; <consider|recommend> {PROC} if no progress in {N} weeks.
Pre-treatment {TEST} {RESULT}, post {TEST} {RESULT}; {TEST} at {RESULT}.
Ran {N} hours via <left|right> {ANAT} access; <no|intermittent> {COND} on the machine.
Access: {ANAT} with <good|weak> thrill and bruit; cannulated without difficulty.
<Intradialytic|Mid-session> {COND} treated with {MED} {DOSE} {ROUTE} and slowing the pump.
<Missed|Shortened> {N} sessions this month; counseled on the risks of {COND}.
{MED} given at the end of {PROC} per protocol; {TEST} due {DATE}.
<Target|Goal> {TEST} <lowered|raised|unchanged>; today {RESULT}.
Access was obtained in the {ANAT} with a micropuncture needle under {TEST} guidance.
<Selective|Diagnostic> injections revealed {COND} of the {ANAT}<, ostial|, mid-segment|>.
<Successful|Uncomplicated> {PROC} of the {ANAT}<.| with good final result.>
{ANAT} <dominant|codominant> circulation; {ANAT} <without|with mild> {COND}.
Hemostasis achieved with {PROC}; distal pulses <intact|palpable> after closure.
Contrast: {DOSE} of {MED}. {TEST} time: {N} minutes.
Loaded with {MED} {DOSE} in the lab; continue {MED} for at least {N} months.
<Hemodynamics|Pressures>: {TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}.
Recommendations: <medical therapy|referral for {PROC}|staged intervention on the {ANAT}>.
The scope was passed <easily|with difficulty> to the {ANAT}; <retroflexion|careful inspection> performed.
Preparation quality <excellent|adequate|poor>; <repeat|next> exam in {N} years.
{N} <sessile|pedunculated> {COND} removed from the {ANAT} by {PROC}; retrieved.
<A|One> <clean-based|bleeding> {COND} in the {ANAT} was treated with {PROC}.
<Medications|Agents> given: {MED} {DOSE} and {MED} {DOSE} {ROUTE}; monitored throughout.
<Random|Targeted> {PROC} of the {ANAT} <done|taken> to rule out {COND}.
Findings: <normal|erythematous|friable> {ANAT}; otherwise unremarkable to the {ANAT}.
Await pathology; <resume|hold> {MED} <in|for> {N} days.
{TEST} on the <right|left> {RESULT}, <improving|stable|worse> since {DATE}.
{TEST} <measured|checked> at {RESULT} and {RESULT}; <continue|add> {MED} drops {FREQ}.
{TEST}: <quiet|injected> {ANAT}, <clear|hazy> {ANAT}, <no|trace> {COND}.
{ANAT}: {COND} at the {ANAT}<; no|, without> {COND}.
{COND} for {N} days; <no|some> curtain over <her|his> vision. Urgent {TEST} obtained.
<Scheduled|Listed> for {PROC} of the <right|left> {ANAT} with Dr. {LAST}.
Instill {MED} {DOSE} {ROUTE} {FREQ} for {N} weeks after surgery.
Glasses prescription <updated|unchanged>; no {COND} today.
<Erythematous|Violaceous|Hyperpigmented> {COND} on the {ANAT}, sparing the {ANAT}.
<Full-body|Total body> skin check: {N} <{COND=lesions}|spots> noted, {COND} on the {ANAT} <most concerning|of concern>.
On {TEST}, <features suggest|appearance favors> {COND}; <proceed with|plan> {PROC}.
Apply {MED} {DOSE} to affected areas {FREQ}, avoiding the {ANAT}.
Treated {N} {COND} with {PROC} today; expect healing over {N} weeks.
{COND} <worse|better> at night; about {N}0% of the body surface involved.
<Sun protection|Photoprotection> counseled; {COND} risk reviewed with <her|him>.
{TEST} to be arranged for suspected {COND}.
Dental: {COND} involving the <upper|lower> {ANAT}; {PROC} recommended.
{MED} {DOSE} infiltrated locally; {PROC} of the {ANAT} completed.
{ANAT} <pink and firm|inflamed|friable>; {COND} <generalized|localized>.
Premedicate with {MED} {DOSE} {ROUTE} before dental work given {COND}.
{TEST} reviewed: {COND} in the {ANAT}.
<Oral hygiene|Home care> reviewed; recall in {N} months.
{COND} for years per <bed partner|wife|husband>, along with {COND} and {COND}.
{TEST} {RESULT}, lowest {TEST} {RESULT}; consistent with <moderate|severe> {COND}.
<Started|Titrated> {PROC} at <fixed|auto> pressure; usage {N} hours per night on download.
Mask leak <high|acceptable>; switching to a <nasal pillow|full face> interface.
<Sleep diary|Log> shows {N} awakenings nightly; {COND} likely contributing.
Avoid {MED} close to bedtime; <maintain|keep> a regular wake time.
Drowsy driving counseled<; no recent incidents|>.
<Pedigree|Family tree> drawn over three generations; {COND} in {N} relatives on the <maternal|paternal> side.
{TEST} identified a <pathogenic|likely pathogenic> variant associated with {COND}.
Variant of uncertain significance found on {TEST}; no change in management at this time.
<Cascade|Targeted> testing offered to <siblings|children|first-degree relatives>.
<Heterozygous|Biallelic> findings <consistent|not consistent> with {COND}.
Pre-test counseling completed<; consent for {TEST} signed|, patient declined testing>.
Recommend {PROC} every {N} years starting at age {AGE} given {COND} risk.
{N} months out from {PROC}; graft function <stable|declining>, {TEST} {RESULT}.
{MED} {DOSE} {FREQ} with {MED}; {TEST} {RESULT}, at goal.
No signs of {COND}<; {TEST} pending|; {TEST} negative>.
Tissue-proven {COND} treated with pulse-dose {MED} {ROUTE} for {N} days.
Prophylaxis with {MED} and {MED} through month {N}.
<Listing|Evaluation> for {PROC} <in progress|on hold> pending {TEST} and {TEST}.
{COND=Infection} risk reviewed: avoid <raw foods|gardening without gloves|sick contacts> while on {MED}.
Palliative care consulted for {COND} in the setting of {COND}.
<Her|His> priorities: <being at home|staying comfortable|seeing family> and avoiding <rehospitalization|the ICU>.
{COND} well palliated with {MED} {DOSE} {ROUTE} {FREQ}; breakthrough {MED} {DOSE}.
Surrogate decision-maker: {NAME} (<daughter|son|spouse>), {PHONE}.
Transitioned to comfort-focused care on {DATE} after family meeting.
Prognosis <days to weeks|weeks to months|guarded> given {COND}.
Hospice referral <placed|discussed|declined>; <MOLST|POLST> completed.
<Bowel regimen|Bowel plan>: {MED} {DOSE} {FREQ} while on {MED}.
{COND} eased with {MED} {DOSE} {ROUTE} and a bedside fan.
Pharmacy consult: <renally|weight-based> adjustment of {MED} to {DOSE} {FREQ}.
Estimated {TEST} {RESULT}; {MED} <not recommended|requires dose reduction> below this.
<Significant|Major> interaction: {MED} raises {MED} levels; <monitor|check> {TEST} in {N} days.
{TEST} before the <fourth|fifth|next> dose: {RESULT}<; increase interval.|; no change.>
<Duplicate|Overlapping> therapy with {MED} and {MED} flagged and discussed with Dr. {LAST}.
Converted {MED} {ROUTE} to {MED} {ROUTE} at {DOSE} {FREQ}.
<Formulary|Therapeutic> substitution: {MED} in place of {MED}.
<Anticoagulation clinic|Pharmacist-managed clinic> note: {TEST} {RESULT}; weekly dose of {MED} <unchanged|increased|reduced>.
Skilled nursing visit: pt <homebound|home-bound> due to {COND}; <ambulates|walks> with <walker|assistance> only.
Pillbox filled for {N} days; {MED} and {MED} <found expired|discarded|reconciled>.
<Caregiver|Daughter> {FIRST} demonstrated <self-injection|the injection technique> of {MED} <correctly|with cues>.
Home safety: <loose rugs|no grab bars|poor lighting> noted; {COND} risk <high|moderate>.
{TEST} {RESULT} at the visit; <reported to|faxed to> Dr. {LAST}.
Next visit in {N} days; <call|notify agency> for {COND} or {COND}.
Employee <exposed|splashed> at work on {DATE}<; source patient| — source status> <unknown|known>.
<Post-exposure|Baseline> {TEST} drawn; {MED} <offered|started|declined>.
<Fit|Cleared> for duty <without restrictions|with restrictions> until {DATE}.
Work-related {COND} of the {ANAT} after <lifting|repetitive motion|a slip> on the job.
<Modified duty|Restrictions>: no <overhead work|ladders|kneeling> for {N} weeks.
Annual {TEST} <negative|read as {RESULT}|not done>; <symptom screen|questionnaire> negative.
Hearing <protection|conservation> program: {TEST} shows <no|a standard> threshold shift.
Injured during <practice|a game|training> on {DATE}; <felt|heard> a pop in the {ANAT}.
<Sideline|Field> assessment: {COND} <suspected|ruled out>; removed from play.
Return to <play|sport> <graded|stepwise> over {N} days once <symptom-free|cleared by {NAME}>.
<Ligamentous|Special> testing: <positive|negative|equivocal> {TEST} of the {ANAT}.
<Brace|Tape> the {ANAT} for {N} weeks; begin {PROC} <now|after {COND=swelling} settles>.
<Training|Mileage> recently <doubled|increased>; {COND} likely overuse-related.
Infectious disease consult for {COND} <with|and> {TEST} growing {COND}.
<Narrow|De-escalate> to {MED} {DOSE} {ROUTE} {FREQ} based on susceptibilities.
Planned duration: {N} weeks from the first negative {TEST} ({DATE}).
Repeat {TEST} <x2|daily> until clear; <obtain|get> {TEST} to assess for {COND}.
<Source|Nidus> likely the {ANAT}; recommend {PROC} for source control.
Recent travel abroad; {COND} began <on return|{N} days after return>.
Contact <precautions|isolation> for {COND}<; may discontinue after {N} negative screens|>.
Weekly {TEST} and {TEST} while on {MED}.
<Screening|Testing> for {COND}, {COND}, and {COND} <sent|offered|declined>.
{COND}, <severe|moderate>; last use {N} days ago.
{TEST} {RESULT} on arrival; started {MED} {DOSE} {ROUTE} with <good|partial> effect.
Induction <completed|planned> with {MED} {DOSE} {ROUTE}; <good|partial> response so far.
Rescue kit with {MED} <provided|prescribed>; safety education given.
{TEST} <positive|negative> for {COND}; <expected|unexpected> on current regimen.
{PROC=Motivational interviewing}: <pre-contemplative|contemplative|ready for change>; interested in {MED}.
Symptom-triggered protocol: {MED} {DOSE} {ROUTE} {FREQ} per scale, max {N} doses.
<Harm reduction|Safer use> supplies offered; referred to {HOSP} outpatient program.
({TEST} {RESULT}) <not|likely not> clinically significant.
{COND}, {COND}, and {COND}: <all|each> <improving|stable|addressed below>.
{MED}/{MED}/{MED} <held|resumed|continued> per <nephrology|cardiology|hepatology>.
{COND}? <Possibly|Maybe> — {TEST} to follow.
{COND} (<new|known>, <mild|moderate|severe>), {ANAT}.
{PROC}: <indicated|not indicated|deferred> at this time.
{ANAT}/{ANAT}: <no|mild|marked> {COND}.
{DOSE} of {MED} was <drawn up|prepared> but not <given|administered> because of {COND}.
Neither {COND} nor {COND} was <seen|identified> on {TEST}.
Not on {MED}, {MED}, or {MED} at home.
It is <unclear|uncertain> whether {COND} <explains|accounts for> the {TEST} of {RESULT}.
Whether {PROC} would help <her|his> {COND} is <debatable|uncertain>; will discuss at conference.
<Probably|Most likely> {COND} rather than {COND}, although {TEST} is <pending|nondiagnostic>.
{TEST} was <repeated|redrawn> at {TIME}, again {RESULT}.
{N} hours after {MED} {DOSE}, {TEST} <rose|fell> to {RESULT}.
The {ANAT}, {ANAT}, and {ANAT} were <examined|inspected> and found <normal|unremarkable>.
{PROC} was <performed|done> by Dr. {LAST} without <complication|incident> on {DATE}.
{COND} was <noted|documented> by the <outside|referring> team at {HOSP}.
<Previously|Formerly> on {MED} (stopped {DATE}), now on {MED}.
{MED} — {DOSE} — given {ROUTE} at {TIME} by {FIRST}.
{N}-week course of {MED} <completed|interrupted> on {DATE}.
{AGE}-year-old <organ recipient|athlete|welder|home-care patient|nursing home resident> with {COND}.
Since {PROC} on {DATE}, <no|recurrent> {COND}.
Both {MED} and {MED} <were|are> <contraindicated|avoided> because of {COND}.
{TEST} (<done|drawn> {DATE}) {RESULT}; {TEST} ({DATE}) {RESULT}.
<Off|Weaned off> {MED} since {DATE}; {COND} has not recurred.
{COND} <vs.|versus|or> {COND} <vs.|versus|or> {COND}; {TEST} <should|will> help distinguish.
In the cath lab, {MED} {DOSE} {ROUTE} was given for {COND}.
After {N} cycles of {MED}, {TEST} showed <complete|partial|no> response in the {ANAT}.
<Without|Off> {MED}, <her|his> {TEST} <climbs|drifts up> to {RESULT}.
{FREQ} dosing of {MED} was <simplified|consolidated> to improve adherence.
{ROUTE} {MED} <not feasible|not tolerated>; switch to {ROUTE} administration.
<She|He> had <no|some> {COND} with the last {PROC}<.| and asks for {MED} beforehand.>
<Reviewed|Went over> the {TEST} images with the patient, showing the {COND} in the {ANAT}.
<Pt|Patient> <unable|too drowsy> to participate; exam limited to the {ANAT}.
Threshold for {PROC} not met; {TEST} {RESULT}.
Pre-{PROC} {TEST} {RESULT}; post-{PROC} {TEST} {RESULT}.
<Per|According to> the {HOSP} {PROC} report, the {ANAT} was <normal|abnormal>.
<Following|After> {MED}, {COND} <abated|recurred> within {N} hours.
{COND} of the {ANAT}<, {ANAT},| and> {ANAT} on <exam|imaging>.
{PROC} deferred: {TEST} {RESULT}<, too high| exceeds threshold| not yet back>.
<Discussed|Reviewed> {PROC} <risks|alternatives>: {COND}, {COND}, <and|or> {COND}.
Plan A: {MED}. Plan B (if {COND}): {PROC}.
{MED} start date {DATE}; <expected|planned> stop {DATE}.
<Watch|Monitor> for {COND} and {COND} <on|while taking> {MED}.
<Reason|Indication> for {MED}: {COND}<.| (per {NAME}).>
[{DATE}] {COND} <noted|worsened>; {MED} <added|increased>.
{TIME}: {TEST} {RESULT}. {TIME}: {TEST} {RESULT}.
<Weaning|Reducing> {MED} by {DOSE} <{FREQ=daily}|{FREQ=each day}>, last dose <on|by> {DATE}.
<Intermittent|Scheduled> {MED}<, {DOSE}| {DOSE} {ROUTE}> {FREQ}, was <changed|converted> to continuous.
Despite <two|three|several> doses of {MED}, {COND} <persisted|continued>, and {PROC} was <performed|required>.
The family (<spouse|son|daughter> {FIRST}) <asked|wanted to know> whether {COND} is <hereditary|contagious|curable>.
<Mother|Father> {FIRST} {LAST} reports the child's {COND} began after {COND}.
<Quit|Stopped> {MED} {N} <days|weeks> ago and <noticed|developed> {COND} shortly after.
<No|Without> {MED} for {N} days prior to {PROC}, per <anesthesia|the proceduralist>.
{PROC} (<elective|urgent|emergent>) for {COND}, booked <at|with> {HOSP}.
{ANAT} <tender|warm|swollen>; {ANAT} <nontender|normal>.
<Severe|Mild|Moderate> {COND} <limits|prevents> <walking|sleeping|chewing|reading>.
{COND} — <resolved|resolving> after {N} <days|doses> of {MED}.
{TEST} from the {ANAT} <grew|showed> {COND}; {MED} <appropriate|inadequate> per susceptibilities.
{TEST} <negative|nonreactive> x{N}; {COND} unlikely.
Should {COND} recur, <escalate|step up> to {MED} {DOSE} {FREQ}.
<Call|Contact> {NAME} at {PHONE} with {TEST} results.
{CITY}-based <home health|hospice|visiting nurse> agency to resume services on {DATE}.
<Seen|Followed> at the {CITY}, {STATE} <sleep|wound|transplant|genetics> center since {DATE}.
{MED}: <hold|skip> the dose <the night before|the morning of> {PROC}.
Transfer to {HOSP} for {PROC} <accepted|requested> by Dr. {LAST} at {TIME}.
{PROC}, then {PROC}, then {MED} maintenance — timeline reviewed with <patient|family>.
<Expected|Anticipated> side effects of {MED} ({COND}, {COND}) reviewed.
<First|Second|Third> dose of {MED} tolerated without {COND}.
<Upon|On> arrival to the unit at {TIME}, {TEST} {RESULT} and {TEST} {RESULT}.
{N} attempts at {PROC} were unsuccessful due to {COND}.
""".strip().splitlines()

LIST_ITEM_MORE3 = r"""
{COND} ▸ {MED} {DOSE} {FREQ}
→ {MED} {DOSE} {ROUTE}<| now>
{COND} │ {MED} │ {DATE}
{MED} │ {DOSE} │ {ROUTE} │ {FREQ}
{PROC} ; {ANAT} ; {DATE}
({N}) {COND}<| — stable>
{N}/ {MED} {DOSE} {FREQ}
a) {COND}  b) {COND}<  c) {COND}|>
i. {PROC} ({DATE}); ii. {PROC}
{MED} ×{N} days ({DATE}–{DATE})
{MED} {DOSE} {ROUTE} {FREQ} <— pt self-administers|— nurse-administered|>
{MED} {DOSE} … {FREQ}
{MED} ({DOSE}) — {COND}
{MED} <started|stopped|changed> {DATE}: {COND}
{COND} — <dx'd|found> on {PROC}
{COND} (per {HOSP} records)
{COND} (<stage|grade> {N})
{COND} <in remission since|controlled since> {DATE}
{COND}, {ANAT} — <left|right|bilateral>
{ANAT}: {COND}
{ANAT} — {PROC} {DATE}
{PROC} ×{N} (last {DATE})
{PROC} — <planned|scheduled> {DATE} w/ Dr. {LAST}
{PROC}/{PROC} ({DATE})
Pre-med: {MED} {DOSE} {ROUTE} <prior to start|before {PROC}>
Drip: {MED} {DOSE}<| titrate per protocol>
Bolus: {MED} {DOSE} {ROUTE} {FREQ=x1}
Lock: {MED} {DOSE} per lumen
Scheduled: {MED} {DOSE} {FREQ}; breakthrough: {MED} {DOSE} {FREQ}
Antimicrobial: {MED} (day {N} of {N})
Immunosuppressant: {MED} {DOSE} {FREQ}, goal {TEST} {RESULT}
Topical: {MED} to {ANAT} {FREQ}
Ophthalmic: {MED} {DOSE} {FREQ} to the {ANAT}
Device: {PROC} (since {DATE})
Dressing: {MED} + foam, change {FREQ}
Access: {ANAT} (<placed|revised> {DATE})
Exposure: {COND} on {DATE}
Restriction: no use of the {ANAT} for {N} weeks
Lab monitoring: {TEST} {FREQ}
Hold parameters: {MED} if {TEST} under {RESULT}
Indication: {COND} · Drug: {MED} · Duration: {N} days
Reaction to {MED}: {COND} (<reported|verified|historical>)
Family: <maternal|paternal> <aunt|uncle|cousin> — {COND}
Carrier status: {COND} (<positive|negative>)
Donor: <living|deceased>; {PROC} on {DATE}
Substance: {MED} — last use {DATE}
{MED} {DOSE} {ROUTE} {FREQ} (#{N}, no refills)
Target: {TEST} {RESULT}–{RESULT}
D/C'd: {MED} <(ineffective)|(intolerance)|(completed course)>
New: {MED}; Held: {MED}; Stopped: {MED}
{DATE} — {COND} — {MED}
» {COND}
~ {MED} {DOSE} <{FREQ=prn}|{FREQ=as needed}>
+ {COND}<| (new)>
{COND}: {N} episodes since {DATE}
{COND} ✓ {MED} ✓ {TEST} ✗
""".strip().splitlines()

LAB_MORE3 = r"""
{TEST} @ {RESULT}, {TEST} @ {RESULT}
{TEST} [{TIME}] {RESULT}
{TEST} — {RESULT} (<prev|last> {RESULT}, {DATE})
{TEST}: {RESULT} ▲
{TEST}: {RESULT} ▼
{TEST} ⇑ {RESULT}
{TEST}: {RESULT}/{RESULT}/{RESULT} (<AM|noon|PM>)
Pre {TEST} {RESULT} / Post {TEST} {RESULT}
{TEST} pre-session {RESULT}; post-session {RESULT}
{TEST} (trough): {RESULT}
{TEST} (peak) {RESULT} at {TIME}
Settings: {TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}
{TEST} on current settings: {TEST} {RESULT} / {TEST} {RESULT} / {TEST} {RESULT}
Hemodynamic data: {TEST} {RESULT}; {TEST} {RESULT}; {TEST} {RESULT}
{TEST} <right|left> {RESULT}; {TEST} <right|left> {RESULT}
{TEST}: {RESULT} on the right, {RESULT} on the left
{TEST} {RESULT} (nadir {RESULT})
{TEST} {RESULT}; {N} events per hour
{TEST} summary: {TEST} {RESULT}; {TEST} {RESULT}
{TEST}: <no pathogenic variants|one VUS|pathogenic variant detected>
{MED} — <susceptible|intermediate|resistant> ({TEST} {RESULT})
{TEST}: {COND} <isolated|identified>, <pan-sensitive|resistant to {MED}>
{TEST} <pending|in progress> — prelim: {COND}
{TEST} ({ANAT}): <no organisms|rare organisms|many neutrophils>
{TEST} (<urine|serum>): <positive|negative> for {COND}
{TEST} <reactive|nonreactive>; {TEST} {RESULT}
{TEST}, {TEST}, {TEST} — all <negative|within range|unremarkable>
Specimen: {ANAT}. {TEST}: {RESULT}.
Accession #{N}: {ANAT} — {COND}
{TEST} ({ANAT}): {COND} <measuring|spanning> {RESULT}
{TEST} #{N} ({DATE}): {RESULT}
{TEST} day {N}: {RESULT}
POD {N}: {TEST} {RESULT}, {TEST} {RESULT}
Hour {N}: {TEST} {RESULT}
{TIME} │ {TEST} │ {RESULT}
{DATE} ¦ {TEST} ¦ {RESULT} ¦ <H|L|N>
{TEST} ........ {RESULT} ........ <flag|normal>
{TEST}:: {RESULT}
{TEST}={RESULT}; {TEST}={RESULT}
{TEST} {RESULT} ({N} h post-dose)
{TEST} {RESULT} → repeat {RESULT} after {MED}
{TEST} {RESULT}, <unchanged|improved|worse> vs {DATE}
{TEST} (home reading) {RESULT}
{TEST} (self-reported) {RESULT}
{TEST} per nursing flowsheet: {RESULT}
Wound: {TEST} {RESULT} x {RESULT}; <no|scant> {COND}
{TEST} at rest {RESULT}; with exertion {RESULT}
{TEST} sitting {RESULT}, {TEST} standing {RESULT}
{TEST} <max|min> {RESULT} over {N} hours
{TEST} (<calculated|estimated>) {RESULT}
{TEST} value {RESULT}
{TEST} {RESULT}, <rising|falling|flat> over {N} days
Baseline {TEST} {RESULT}; current {TEST} {RESULT}
{TEST}: <borderline|equivocal|indeterminate> ({RESULT})
{TEST} — see scanned report from {HOSP}
{TEST} {ANAT}, {DATE}: {COND}, {COND}
{TEST} <confirms|excludes> {COND} of the {ANAT}
""".strip().splitlines()

# Header / form lines: side-by-side phone vs fax, record vs account vs SSN,
# names in many orders, addresses and foreign city/postcode orders.
HEADER_MORE3 = r"""
Ph/Fax (<office|clinic>): {PHONE} / {FAX}
T: {PHONE}   F: {FAX}
<T.|Tel.> {PHONE} <·|;|/> <F.|Fx> {FAX}
Tel (W): {PHONE}   Tel (M): {PHONE}   Fx: {FAX}
Fx {FAX}  Ph {PHONE}
<Fax|FAX> first: {FAX}; voice: {PHONE}
Office <tel|line>: {PHONE} (<fax|facsimile>: {FAX})
Voice {PHONE} - Fax {FAX} - <Email|Mail> {EMAIL}
<Phone (day)|Daytime ph>: {PHONE}   <Phone (eve)|Evening ph>: {PHONE}
Direct dial: {PHONE}   Secure fax: {FAX}
<Clinic|Dept> phone / fax: {PHONE} / {FAX}
Main: {PHONE} • Fax: {FAX} • Web: {URL}
Ph. (home) {PHONE} ; Ph. (cell) {PHONE} ; Fax (work) {FAX}
Reply by fax to {FAX} or by phone to {PHONE}
Fax (records): {FAX}   Fax (referrals): {FAX}   Phone (front desk): {PHONE}
<Pager|Beeper>: {PHONE}   <Fax|Fx>: {FAX}
MRN: {MRN}   Acct: {ACCT}   SSN: {SSN}
<Record|Rec.> no. {MRN} / <Acct|A/C> no. {ACCT} / <SS|Soc.> no. {SSN}
SSN {SSN} ; MRN {MRN} ; FIN {ACCT}
<Chart ID|Chart>: {MRN}   <Claim ID|Claim>: {ACCT}
Medical record #: {MRN}  (account #: {ACCT})
<Unit rec.|Hospital ID>: {MRN} — <Billing ref.|Billing no.>: {ACCT}
Pt acct {ACCT} / pt MRN {MRN}
<Member|Subscriber> no.: {ACCT}   Patient no.: {MRN}   SSN (last four): {SSN}
ID numbers: MRN {MRN}, encounter {ACCT}, social {SSN}
Old MRN: {MRN}   New MRN: {MRN}
<Claim|Invoice> ref {ACCT} for chart {MRN}
Taxpayer / SSN: {SSN}   Guarantor acct: {ACCT}
{LAST} {FIRST}   {DATE}   {MRN}
{LAST}, {FIRST} ({AGE} <y|yo|F|M>)   MRN {MRN}
{FIRST} {LAST} · {AGE} <y|yrs|yo> · <F|M> · DOB {DATE}
{LAST}/{FIRST}   <DOB|born> {DATE}
{LAST} {FIRST}, <née|born> {LAST}
Patient (last, first): {LAST}, {FIRST}
Patient (first last): {FIRST} {LAST}
Name (surname first): {LAST} {FIRST}
Last name: {LAST}   First name: {FIRST}   Middle initial: <A.|J.|M.|R.|>
Given: {FIRST}  Family: {LAST}  Preferred: {FIRST}
{FIRST} <A.|J.|M.|R.|T.> {LAST}, <MD|RN|NP|PA-C>
Dr. {LAST}, {FIRST} <A.|M.|>   <Cardiology|Oncology|Nephrology>
Full name (as on ID): {LAST}, {FIRST}   Preferred name: {FIRST}
Maiden name: {LAST}   Married name: {LAST}
Alias / AKA: {FIRST} {LAST}
Name on card: {FIRST} {LAST}   Card holder ID: {ACCT}
Mother: {LAST}, {FIRST} ; Father: {LAST}, {FIRST}
Home: {ADDRESS}, {CITY}, {STATE} {ZIP}, <USA|United States>
Mailing: {ADDRESS} · {CITY} · {STATE} · {ZIP}
{ADDRESS}, {ZIP} {CITY}
{ADDRESS}, {CITY} {ZIP}, <UK|United Kingdom>
{ADDRESS}, {ZIP} {CITY}, <Germany|France|Netherlands|Belgium>
{ZIP} {STATE}, {CITY}, {ADDRESS}
{ZIP} {CITY} ({STATE})
{CITY}, {STATE}  {ZIP}  <Canada|CAN>
<Postal address|Post address>: {ADDRESS} - {ZIP} {CITY}
Addr: {ADDRESS}; Town: {CITY}; <Province|Region|County>: {STATE}; <Postcode|PLZ|CP>: {ZIP}
<PLZ/Ort|CP/Ville|Postcode/Town>: {ZIP} {CITY}
City: {CITY}  Zip: {ZIP}  State: {STATE}
Zip {ZIP} / State {STATE} / City {CITY}
{CITY} – {ZIP}, {STATE}
Street address: {ADDRESS} ; Apt/Suite: <none|n/a|see above>
Billing address same as home: <yes|no> — {ADDRESS}, {CITY}
Ship to: {NAME}, {ADDRESS}, {CITY}, {STATE} {ZIP}
Permanent addr.: {ADDRESS}, {CITY}   Current addr.: {ADDRESS}, {CITY}
Patient: {LAST}, {FIRST} • {ADDRESS}, {CITY} • {PHONE}
{HOSP} ({PHONE} ; fax {FAX})
{HOSP} — {ADDRESS}, {CITY} {ZIP} — T {PHONE} — F {FAX}
Facility: {HOSP}   Fac. phone: {PHONE}   Fac. fax: {FAX}
Pharmacy: {PHARM} • ph {PHONE} • fx {FAX}
Pharm. on file: {PHARM} ({ADDRESS}, {CITY})
Emerg. contact (primary): {NAME} ({PHONE}) ; (secondary): {NAME} ({PHONE})
NOK {LAST}, {FIRST} — <spouse|son|daughter|sibling> — {PHONE} — {EMAIL}
Contact pref.: <phone|email|portal> ; ph {PHONE} ; em {EMAIL}
E: {EMAIL}   W: {URL}   T: {PHONE}
Email (personal): {EMAIL}   Email (work): {EMAIL}
Portal user: {EMAIL}   Portal site: {URL}
Referring: {LAST}, {FIRST} (<MD|DO>) · tel {PHONE} · fax {FAX}
PCP: {FIRST} {LAST} / {HOSP} / ph {PHONE} / fx {FAX}
DOB {DATE}  ·  SSN {SSN}  ·  MRN {MRN}
D/O/B: {DATE}   Age at visit: {AGE}
Date of birth (DD/MM/YYYY): {DATE}
Insured: {LAST}, {FIRST}   Insured ID: {ACCT}   Insured SSN: {SSN}
<Ins. co.|Carrier> phone {PHONE} / claims fax {FAX}
Encounter: {ACCT} · Visit date: {DATE} {TIME} · Location: {HOSP}
Label: {LAST} {FIRST} / {MRN} / {DATE} / {AGE} <y|yrs|>
""".strip().splitlines()

# Administrative sentences with several PII slots.
ADMIN_MORE3 = r"""
Faxed the consult note to {FAX}, then called {PHONE} to confirm receipt.
Office phone is {PHONE}; please do not send faxes there — use {FAX} instead.
{NAME} (DOB {DATE}; MRN {MRN}) asked to have the bill for account {ACCT} reissued.
The claim ({ACCT}) was linked to the wrong chart — correct MRN is {MRN}, not {MRN}.
Patient gave SSN {SSN} at registration; account {ACCT} was opened under MRN {MRN}.
Guarantor "{FIRST} {LAST}" listed with phone {PHONE} and mailing address {ADDRESS}, {CITY}.
Caller "{FIRST}" at {PHONE} stated she is the <daughter|niece|caregiver> of {NAME}.
Records for {LAST}, {FIRST} (chart {MRN}) were faxed to Dr. {LAST} at {FAX} on {DATE}.
Please route the attached form to {FIRST} {LAST} (ext. in directory) or fax it to {FAX}.
Statement for {NAME} — acct {ACCT} — returned from {ADDRESS}; new address {ADDRESS}, {CITY} {ZIP}.
Spoke with {FIRST} {LAST}'s <wife|husband|partner>, {FIRST}, at {PHONE} at {TIME} on {DATE}.
Voicemail left on {PHONE} (<home|cell|work>) asking {FIRST} to call {HOSP} back at {PHONE}.
Patient requested that the lab results go to {EMAIL} and not to {EMAIL}.
Insurance card shows member {ACCT}; the patient's SSN ({SSN}) does not match the subscriber record.
Two charts found for {NAME}: {MRN} and {MRN}; both share the birth date {DATE}.
The guardian, {NAME}, signed the consent on {DATE}; contact {PHONE} / {EMAIL}.
Home visit scheduled at {ADDRESS}, {CITY} on {DATE}; gate code provided by {FIRST}.
Referral packet (MRN {MRN}, claim {ACCT}) sent to {HOSP}, fax {FAX}, phone {PHONE}.
{PHARM} at {ADDRESS}, {CITY} — phone {PHONE}, fax {FAX} — is the pharmacy of record.
Fax from {PHARM} ({FAX}) asks Dr. {LAST} to renew {MED} for {NAME}.
Identity confirmed: name {NAME}, DOB {DATE}, last four of SSN {SSN}.
Transport from {HOSP} to {ADDRESS}, {CITY} {ZIP} booked under trip number {ACCT}.
Forward any mail for {FIRST} {LAST} to c/o {NAME}, {ADDRESS}, {CITY}, {STATE}.
The caller gave two numbers — {PHONE} (cell) and {PHONE} (landline) — and the email {EMAIL}.
Employer "{HOSP}" requested the return-to-work note; fax {FAX}, attn {FIRST} {LAST}.
Interpreter {FIRST} {LAST} (agency line {PHONE}) joined the call with {NAME} on {DATE}.
Old phone {PHONE} removed; new cell {PHONE} and work fax {FAX} added to the chart.
Patient lives at {ADDRESS} in {CITY} ({STATE}), zip {ZIP}, with <her|his> <son|daughter|spouse> {FIRST}.
MRN {MRN} / account {ACCT} / SSN {SSN} — verified against the photo ID on {DATE}.
Billing dispute: account {ACCT} was charged twice for the visit on {DATE}; callback {PHONE}.
Appeal letter for claim {ACCT} mailed to the insurer; copy faxed to {FAX}.
Please send the imaging CD to {NAME} at {ADDRESS}, {CITY}, {STATE} {ZIP} (phone {PHONE}).
Portal message from {EMAIL} claims to be {FIRST} {LAST}, but the chart lists {EMAIL}.
The {AGE}-year-old patient ({LAST}, {FIRST}) was registered as new under MRN {MRN}.
<Called|Phoned> {HOSP} at {PHONE}; they will fax the discharge summary to {FAX} today.
Outside MRN {MRN} at {HOSP} corresponds to our MRN {MRN}.
Wrong fax number on file ({FAX}); the correct office fax for Dr. {LAST} is {FAX}.
Contact sheet updated — phone: {PHONE}; fax: {FAX}; email: {EMAIL}; site: {URL}.
{FIRST} {LAST} (guarantor, SSN {SSN}) agreed to a payment plan on account {ACCT}.
Letter addressed to "{FIRST} {LAST}, {ADDRESS}, {CITY} {ZIP}" came back undeliverable.
Proxy {FIRST} {LAST} [{PHONE}] may discuss results with the team per signed form dated {DATE}.
Ambulance crew from {CITY} brought {NAME} (approx. {AGE} y) to {HOSP} at {TIME}.
Please update the emergency contact: {NAME}, relation <brother|sister|friend|neighbor>, {PHONE}.
Prior authorization number {ACCT} was issued on {DATE} for {NAME}, member ID {ACCT}.
Mail-order pharmacy {PHARM} will ship {MED} to {ADDRESS}, {CITY} {ZIP}; questions to {PHONE}.
Reminder texts go to {PHONE}; appointment letters go to {ADDRESS}, {CITY}, {STATE}.
Dr. {FIRST} {LAST} (phone {PHONE}, pager {PHONE}) is covering for Dr. {LAST} until {DATE}.
Chart {MRN}: SSN field showed {SSN}; corrected after the patient presented the card.
The referral from {HOSP} ({CITY}, {STATE}) lists the patient's phone as {PHONE}.
Sent the intake link {URL} to {EMAIL}; the patient will call {PHONE} if it fails.
Invoice {ACCT} for {NAME} — service date {DATE} — payable by phone at {PHONE} or online at {URL}.
Patient prefers correspondence in <Spanish|French|Polish|Portuguese> to {ADDRESS}, {CITY}.
Child {FIRST} {LAST}, age {AGE}, is accompanied by <her|his> <mother|father|grandmother> {FIRST} ({PHONE}).
Family asked that only {FIRST} ({PHONE}) and {FIRST} ({PHONE}) receive updates.
Death certificate request for {NAME} (MRN {MRN}) received from the funeral home; fax {FAX}.
The fax header read "{HOSP} {FAX}" and the cover sheet listed {PHONE} for questions.
Legal request from attorney {FIRST} {LAST}, {ADDRESS}, {CITY}, tel {PHONE}, fax {FAX}.
Workers' comp claim {ACCT}; adjuster {FIRST} {LAST}, phone {PHONE}, email {EMAIL}.
Transferred the call for {LAST}, {FIRST} (DOB {DATE}) to the nurse line at {PHONE}.
Demographic change: surname changed from {LAST} to {LAST} on {DATE}; MRN {MRN} unchanged.
Registration note — {LAST} {FIRST}, born {DATE} in {CITY}, SSN {SSN}, acct {ACCT}.
Second opinion records for {NAME} were uploaded via {URL} and confirmed by email to {EMAIL}.
""".strip().splitlines()

# Letter lines: letterheads, openings, Re: lines, closings, signatures, cc.
LETTER_MORE3 = r"""
{HOSP} • {ADDRESS} • {CITY}, {STATE} {ZIP} • T {PHONE} • F {FAX}
{HOSP}, {ADDRESS}, {ZIP} {CITY} — tel. {PHONE}, fax {FAX}
Office of Dr. {FIRST} {LAST} · {ADDRESS} · {CITY} · {PHONE}
Telephone {PHONE}   Facsimile {FAX}   {URL}
Appointments: {PHONE} · Secretary: {PHONE} · Fax: {FAX}
Our ref: {MRN}   Your ref: {ACCT}
Re: {FIRST} {LAST} ({DATE}) — Hospital no. {MRN} — NHS/insurance no. {ACCT}
RE: {LAST}, {FIRST}; DOB {DATE}; {ADDRESS}, {CITY}
Re: your patient {NAME}, of {ADDRESS}, {CITY} {ZIP}
Subject: {FIRST} {LAST}, chart {MRN}, claim {ACCT}
Patient: {LAST} {FIRST} · born {DATE} · {CITY}
Date of clinic: {DATE}   Date typed: {DATE}
Dear Dr. {LAST} (and Dr. {LAST}),
Dear Doctor {LAST},
Dear {FIRST} and family,
Dear colleague at {HOSP},
Dear Sir or Madam, re: {LAST}, {FIRST}
Hi {FIRST},
Thank you for seeing {LAST}, {FIRST}, whose details are above.
I write on behalf of my patient {FIRST} {LAST}, who lives at {ADDRESS}, {CITY}.
I reviewed {NAME} today together with <her|his> <son|daughter|wife|husband>, {FIRST} {LAST}.
You may contact the family through {FIRST} on {PHONE} or {EMAIL}.
Our secure fax for replies is {FAX}; please quote hospital number {MRN}.
Please telephone my office on {PHONE} if a sooner appointment is needed.
The patient has asked that future letters be sent to {ADDRESS}, {CITY} {ZIP}.
With best wishes to you and {FIRST},
Kindest regards, {FIRST}
Many thanks again for referring {FIRST},
Yours, {FIRST} {LAST} (<Registrar|Fellow|Resident>)
{FIRST} {LAST}
Dr. {LAST}, {FIRST} <MD|DO|MBBS>
{LAST}, {FIRST} — <Clinical Nurse Specialist|Nurse Practitioner|Physician Assistant>
{FIRST} {LAST} <MD|DO>, on behalf of Dr. {FIRST} {LAST}
Signed electronically: {FIRST} {LAST}, <MD|NP|RN> — {DATE} {TIME}
{FIRST} {LAST} (secretary to Dr. {LAST}) · {PHONE}
cc: {FIRST} {LAST} (patient), {ADDRESS}, {CITY}
cc: Dr. {FIRST} {LAST}, {HOSP}, fax {FAX}
Copy to: GP Dr. {LAST} · {HOSP} · {PHONE}
Distribution: {NAME}; Dr. {LAST}; medical records ({HOSP})
Enc.: {TEST} report of {DATE}; medication list for {FIRST} {LAST}
bcc: chart {MRN}
""".strip().splitlines()

# Informal patient / family messages.
MESSAGE_MORE3 = r"""
hi its {FIRST} again my fone # changed to {PHONE}
pls fax the form to my work at {FAX} not my home phone
my moms name is {FIRST} {LAST} she is {AGE} shes at {HOSP} rn
can u send the refil to {PHARM} on {ADDRESS} the other one closed
this is {FIRST} {LAST}'s daughter, dad is {AGE} and cant get out of bed
hey dr {LAST} my email is {EMAIL} can u send the letter there
new adress is {ADDRESS} {CITY} {ZIP} pls update ur records
my husbands cell {PHONE} mine is {PHONE}
i gave the wrong ssn on the form its {SSN} sorry
acct number on the bill is {ACCT} why am i being charged again
the mrn on my bracelet said {MRN} is that right
im {FIRST}, wife of {FIRST},, we live at {ADDRESS}
grandma {FIRST} turned {AGE} last week n her {COND} got worse
hi my sons name is {FIRST} hes {AGE} his dob is {DATE}
call me on {PHONE} or my sister {FIRST} on {PHONE}
pls dont send mail to {ADDRESS} anymore we moved to {CITY}
{PHARM} phone is {PHONE} they need the doctor to call
is the fax for dr {LAST} still {FAX}?? mine keeps failing
my neighbor {FIRST} {LAST} will drive me on {DATE}
appt was {DATE} but i was sick can i come {DATE} instead
i live in {CITY} now its like {N} hrs from u
how do i log in to {URL} it says wrong password
my insurence changed new member id {ACCT}
dad {FIRST} ({AGE}) fell again this morning can someone call {PHONE}
hello i am writing for my father {LAST} {FIRST} he dont speak english well
my partner {FIRST} can pick up the meds at {PHARM} ok?
pls call before {TIME} my # is {PHONE}
sry wrong email use {EMAIL} instead of the old one
my son {FIRST} {LAST} dob {DATE} mrn {MRN} needs his shot records
the pharmacy on {ADDRESS} said no refills left for {MED}
did u get my fax from {FAX}? sent it {DATE}
im the aunt of {FIRST} ({AGE} yrs) can i get her results
msg from {FIRST} - my mom {FIRST} {LAST} passed on {DATE} pls cancel her appts
can u mail my {TEST} results to {ADDRESS}, {CITY}, {STATE} {ZIP}
its {FIRST} from {CITY}, the one w the {COND} lol
my bf {FIRST} said u called {PHONE} but that's his # not mine
work fax {FAX}, work phone {PHONE}, pls use the fax for the note
hey can u tell dr {FIRST} {LAST} i stopped the {MED}
wife {FIRST} is {AGE} and pregnant is {MED} safe
my kid goes to school in {CITY} can u email the form to {EMAIL}
hiii its me {FIRST} {LAST} room {N} at {HOSP} whens discharge
grandpa {LAST} is at {ADDRESS} w my uncle {FIRST} now
pls send bill to my dads email {EMAIL} he pays it
the lady at the desk wrote my zip as {ZIP} but its wrong
i think u have my old ssn {SSN} on file
my claim # is {ACCT} the insurance said to give it to u
yes ok {DATE} at {TIME} works for {FIRST} n me
hi this is {FIRST} at {PHARM} returning ur call re {NAME}
can my daughter {FIRST} ({PHONE}) talk to the nurse for me
how much is the copay for {PROC}? acct {ACCT}
i was born {DATE} not the date u have
tell {FIRST} at the front desk thanks 😊
ok so the {MED} from {PHARM} looks different than before??
my moms house is {ADDRESS} can the home nurse go there
mrn {MRN} acct {ACCT} i need a receipt for my taxes
my son {FIRST} is {AGE} months and has {COND} since {DATE}
i dont have email just call {PHONE} or text
can u resend the link to {EMAIL} i deleted it by mistake
hi dr {LAST} its {FIRST} {LAST} from {CITY} remember me lol
my brother {FIRST} {LAST} has the same {COND} should he come in too
fax to {FAX} attn {FIRST} pls thx
im staying at my daughters in {CITY} {STATE} til {DATE}
""".strip().splitlines()


THIRD = {
    "NARRATIVE": NARRATIVE_MORE3,
    "HEADER": HEADER_MORE3,
    "ADMIN": ADMIN_MORE3,
    "LETTER": LETTER_MORE3,
    "MESSAGE": MESSAGE_MORE3,
    "LIST_ITEM": LIST_ITEM_MORE3,
    "LAB": LAB_MORE3,
}

EDITIONS = [SECOND, THIRD]
