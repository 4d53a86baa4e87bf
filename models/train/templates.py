"""Sentence- and line-level templates for the synthetic clinical corpus.

Syntax: {SLOT} is filled from a word list or a generator (see corpus.py);
<a|b|c> picks one alternative (an empty alternative is allowed); {SLOT=text} is text the
template writes itself that is an entity of the slot's label ("Allergy: {MED} -
{COND=nausea}"), so the gold spans hold every clinical entity of the sentence, not only
the filled ones (README.md, "Entities the templates write"). Each pool is
split into disjoint train and held-out templates by corpus.split_templates, so
held-out documents are built only from sentence shapes the models never saw.
"""

import templates_fourth
import templates_more

# Narrative sentences of notes, H&Ps and hospital courses.
NARRATIVE = r"""
<Prescribed|Rx'd|Prescribing> {MED} {DOSE} {FREQ} <today|at discharge|for {N} days>.
<She|He> <requests|needs> a refill of {MED}<.| {DOSE}.>
<Allergic|Allergy> to {MED} and {MED}<.| ({COND=hives}).>
<Currently|Presently> on {MED}, {MED}, {MED} and {MED}.
{MED} <was|has been> <held|paused|stopped> <since|on> {DATE} <for|because of> {COND}.
<Ordered|Obtained|Sent> {TEST}<, {TEST}| and {TEST}|>; <results|result> pending.
{TEST} <results|came back> <were|was> <abnormal|normal|borderline>: {RESULT}.
<No|Without> {COND} on <today's|the> {TEST}.
<Consent|Consented|Informed consent> <obtained|signed> for {PROC}.
<Post-procedure|After the {PROC}|Following {PROC}> <she|he> <developed|had> {COND}.
<She|He> is <now|currently> {N} <days|weeks> <post-op|out> from {PROC}.
<Tender|{COND=Tenderness}> <to palpation|on palpation> <of|over> the {ANAT}<.| and {ANAT}.>
<{COND=Swelling}|{COND=Edema}|{COND=Erythema}> <of|over|around> the {ANAT} <noted|present|improving>.
<{COND=Injury}|{COND=Trauma}|{COND=Laceration}> to the {ANAT} <after|from> a <fall|MVC|{COND=sports injury}>.
<{COND=Pain}|{COND=Ache}> <in|at> the {ANAT} <rated|scored> {N}/10.
<History|Hx> <significant|notable> for {COND}<,| and> {COND}<.|, both stable.>
<Diagnosed with|New diagnosis of|Known> {COND}<.| in {DATE}.| at {HOSP}.>
<She|He> <presents|presented|comes in> with <acute|worsening|new> {COND}.
<Treated|Being treated> for {COND} with {MED} {DOSE} {FREQ}.
{COND} exacerbation<,| -> <treated with|given> {MED} {ROUTE}.
<Screened|Screening> for {COND} with {TEST}<.|; negative.>
<Dx|Diagnosis>: {COND} <of the|involving the|affecting the> {ANAT}.
<{PROC=Biopsy}|{PROC=FNA}|{PROC=Aspiration}> of the {ANAT} <planned|performed> <to evaluate|for> {COND}.
<Received|Completed> {PROC} <and|then> <started|began> {MED}.
{MED} <causes|caused> <her|him> {COND}<; switched to {MED}.|.>
<Admission|Initial> {TEST} {RESULT}; <discharge|latest> {TEST} {RESULT}.
<We|I> <reviewed|discussed> the {TEST} <and|which> <showed|demonstrated> {COND} <in|of> the {ANAT}.
<She|He> <will|should> <continue|stay on> {MED} <until|through> {DATE}.
<Her|His> <daughter|son|spouse> {FIRST} <manages|fills> <her|his> {MED} <pillbox|prescriptions>.
<Stable|Improving|Worsening> {COND}, <on|taking> {MED} {DOSE} {ROUTE} {FREQ}.
This is a {AGE} year old <gentleman|lady|man|woman> <seen|evaluated> today for follow-up of {COND}.
<Today|At this visit> <she|he> <reports|describes> <intermittent|constant|new> {COND} and <occasional|no> {COND}.
Over the last {N} <days|weeks> <the patient|pt> has <noticed|developed> {COND} involving the {ANAT}.
<Symptoms|Sx> began after <starting|stopping> {MED}.
<She|He> <has been|was> <taking|using> {MED} {DOSE} {FREQ} <with good effect|without relief|as prescribed>.
<Per|According to> <her|his> <daughter|son|wife|husband>, <she|he> <missed|skipped> several doses of {MED}.
<Medication reconciliation|Med rec> <completed|done>; {MED} <added|removed|resumed>.
<Given|In light of> <her|his> {COND}, we <will avoid|held> {MED}.
<Switch|Transition> from {MED} {ROUTE} to {MED} {ROUTE} <when tolerating diet|tomorrow|once afebrile>.
Recommend {MED} {DOSE} {ROUTE} {FREQ} <x|for> {N} <days|weeks>, then <reassess|taper>.
<Orders|Order>: {MED} {DOSE} {ROUTE} {FREQ}; {TEST} in AM.
<Pre-op|Preoperative> {TEST} <was|is> {RESULT}; cleared for {PROC}.
<Intra-op|Intraoperative> findings: {COND} of the {ANAT}.
<She|He> <tolerated|underwent> {PROC} <well|without difficulty> and was <transferred|moved> to <PACU|the floor>.
<Underwent|Had> {PROC} <for|because of> {COND} <last year|in {DATE}|at age {AGE}>.
<Previous|Prior> surgeries: {PROC}, {PROC}.
<Repeat|Follow-up> {TEST} showed <resolution|improvement|progression> of {COND}.
<Her|His> {TEST} <remains|is still> <elevated|low|stable> at {RESULT}.
<Trend|Trending> {TEST}: {RESULT} <on admission|yesterday>, {RESULT} today.
<Notable|Significant> for {TEST} of {RESULT} and {TEST} of {RESULT}.
<Palpation|Auscultation> of the {ANAT} <reveals|revealed> <no abnormality|{COND=crackles}|a {COND=murmur}|{COND=tenderness}>.
<Decreased|Diminished|Absent> breath sounds over the {ANAT}, consistent with {COND}.
<Small|Large|Moderate> {COND} <noted|seen> in the {ANAT} on {TEST}.
<Findings|Results> <are|were> concerning for {COND}; <will|plan to> <discuss|review> with <her|him>.
<Working|Leading> diagnosis is {COND}<.|, with {COND} on the differential.>
<Problem|Issue> #{N}: {COND}. <Plan|P>: continue {MED}.
<#|No.> {N} {COND} - <stable|improving|worsening>, <on|continue> {MED} {DOSE}.
{COND}: <managed|treated> with {MED}<.|; consider {PROC}.>
<{COND=Pain}|{COND=Discomfort}> is <localized|located> to the {ANAT} <and|but> <worse|better> with {MED}.
<Risk factors|RF> include {COND}, {COND} and <smoking|family history>.
<She|He> <quit|stopped> {MED} <on her own|due to cost|because of side effects>.
<Patient|Pt> <educated|counseled> on {COND} and the use of {MED}.
<Return|RTC> in {N} <weeks|months> <or sooner if|with> {COND}.
<Hospitalized|Admitted> <in|on> {DATE} for {COND} <at|to> {HOSP}.
<She|He> <was|is> <followed|seen> by Dr. {LAST} <of|from> <cardiology|oncology|rheumatology> for {COND}.
<History obtained from|Collateral from> <patient|her daughter|his son> {FIRST}.
{FIRST} <reports|states> that <her|his> {COND} <started|worsened> {N} days ago.
<Pt|Patient> {FIRST} {LAST} <arrived|presented> <by ambulance|via EMS|ambulatory> with {COND}.
<Interval history|Since last visit>: <new|ongoing> {COND}; <no|some> {COND}.
<{TEST=Weight}|{TEST=Wt}> {RESULT}, <{TEST=BMI}|{TEST=bmi}> {RESULT}.
<{TEST=Blood pressure}|{TEST=BP}> <today|this morning> {RESULT}, <{TEST=pulse}|{TEST=HR}> {RESULT}.
<The|This> <{COND=rash}|{COND=lesion}|{COND=mass}> on the {ANAT} <has|had> <grown|not changed|resolved>.
<{PROC=Biopsy}|Pathology> of the {ANAT} <confirmed|was consistent with|ruled out> {COND}.
<Started|Initiated> on {PROC} <for|given> {COND}<.| with {MED} premedication.>
<Cycle|Round> {N} of {PROC} <given|completed> on {DATE}.
<Scheduled|Booked> {PROC} <with|by> Dr. {LAST} <at|in> {HOSP}.
<Advised|Told> to <avoid|limit|hold> {MED} <before|after> the {PROC}.
<Dose|Dosage> of {MED} <adjusted|reduced|increased> for <renal function|{COND}|weight>.
<{ROUTE=IV}|{ROUTE=Intravenous}> {MED} {DOSE} {FREQ} <was|is> <continued|started|stopped>.
<Hold|Held> {MED} <if|when> <{TEST=SBP}|{TEST=HR}|{TEST=glucose}> <below|under> {RESULT}.
<Sliding scale|Correction> {MED} {ROUTE} {FREQ} <with meals|per protocol>.
{NAME} is a {AGE}-year-old <man|woman|male|female|patient> with a history of {COND} and {COND} who presents with {COND}.
<Pt|Patient|The patient> is a {AGE} <yo|y/o|year old> <M|F|male|female> w/ <hx|PMH|history> of {COND}, presenting with {COND} x {N} days.
{AGE} yo <M|F> with <PMHx|PMH> significant for {COND}, {COND}, and {COND}.
<Mr.|Ms.|Mrs.> {LAST} reports worsening {COND} over the past {N} <days|weeks|months>.
<She|He> denies {COND}, {COND} or {COND}.
<Patient|Pt> <c/o|complains of|reports> {COND} radiating to the {ANAT}.
<She|He> was started on {MED} {DOSE} {ROUTE} {FREQ} for {COND}.
Started {MED} {DOSE} {FREQ}<.| for {COND}.>
Continue {MED} {DOSE} {ROUTE} {FREQ}.
<Discontinue|Stop|Hold> {MED} given <concern for|risk of> {COND}.
<Increase|Decrease|Titrate> {MED} to {DOSE} {FREQ}.
{MED} was <switched|changed> to {MED} because of {COND}.
Home medications include {MED}, {MED} and {MED}.
<She|He> takes {MED} {DOSE} {FREQ} and {MED} {DOSE} {FREQ}.
<She|He> underwent {PROC} on {DATE} <without complication|which was uncomplicated|at {HOSP}>.
<S/p|Status post> {PROC} <in|on> {DATE}.
<Plan|Will plan|Scheduled> for {PROC} <next week|on {DATE}|as an outpatient>.
{PROC} <showed|revealed|demonstrated> {COND} <in|of|involving> the {ANAT}.
{TEST} <showed|revealed|demonstrated|was notable for> {COND}.
{TEST} <was|is> {RESULT}<.|, up from {RESULT}.|, down from {RESULT}.>
<Labs|Labs notable for|Pertinent labs>: {TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}.
<On exam|Exam|PE>: {COND=tenderness} <over|of> the {ANAT}, no {COND}.
Examination of the {ANAT} <was|is> <unremarkable|normal|notable for {COND=swelling}>.
<There is|Noted> <mild|moderate|severe> {COND} <of|in> the {ANAT}.
<Vitals|VS>: {TEST} {RESULT}, {TEST} {RESULT}, {TEST} {RESULT}.
<Imaging|Radiology>: {TEST} of the {ANAT} with <no acute findings|evidence of {COND}>.
<Assessment|A/P|Impression>: {COND}<,| likely secondary to> {COND}.
<Likely|Probable|Suspected|Rule out|R/O> {COND}<.|; less likely {COND}.>
Differential includes {COND}, {COND}, and {COND}.
<Consult|Consulted|Referred to> <cardiology|GI|neurology|nephrology|surgery> for <evaluation of|possible> {PROC}.
<She|He> was admitted to {HOSP} on {DATE} with {COND}.
<Admitted|Presented> <to|at> {HOSP} <ED|emergency department> with {COND} and {COND}.
<Seen|Evaluated> by Dr. {LAST} <on|in clinic on> {DATE}.
Follow up with Dr. {FIRST} {LAST} in {N} <weeks|months>.
<Family history|FHx>: <mother|father|sister|brother> with {COND}.
<Allergies|Allergic to|ALLERGIES>: {MED} <({COND=rash})|({COND=hives})|({COND=anaphylaxis})|>.
<No known drug allergies|NKDA>. <Takes|On> {MED} {FREQ}.
<Social history|SH>: lives in {CITY} with <her|his> <husband|wife|daughter|son|partner>.
<She|He> works at {HOSP} as a <nurse|technician|cook|clerk>.
<Patient|Pt> <was|is> given {MED} {DOSE} {ROUTE} in the <ED|clinic|ER>.
<Received|Given> {MED} {DOSE} {ROUTE} {FREQ=x1} with improvement in {COND}.
<{COND=Pain}|Symptoms> <improved|resolved|persisted> after {MED}.
{COND} <is|remains> <well controlled|poorly controlled|stable> on {MED} {DOSE} {FREQ}.
<Check|Repeat|Order> {TEST} <in|within> {N} <days|weeks>.
<We will|Will> <obtain|order|check> {TEST} and {TEST}.
{TEST} <pending|ordered|to be drawn>.
<Recommend|Recommended> {PROC} and {PROC}.
Post-op course complicated by {COND}, treated with {MED}.
<Wound|Incision> over the {ANAT} <is|was> <clean and dry|healing well|erythematous>.
<She|He> <reports|notes> {COND} <when|after> <walking|eating|lying flat>.
<Denies|No> {COND}. <Positive for|Endorses> {COND}.
ROS <positive for|notable for> {COND} and {COND}<; negative for| , otherwise negative. Neg for> {COND}.
<Hx|History> of {PROC} <in|at age> {AGE}.
<Diagnosed|Dx'd> with {COND} <at|at age|around age> {AGE}.
<Mother|Father> died of {COND} at {AGE}.
Reason for visit: {COND}.
<CC|Chief complaint|Chief Complaint>: {COND}<| x {N} days| and {COND}>.
{MED} {DOSE} was <given|administered> {ROUTE} at {TIME}.
<Her|His> {TEST} on {DATE} was {RESULT}.
Transfused {N} units <PRBC|packed red cells> for {COND}.
<Anticoagulation|Anticoagulated> with {MED} for {COND}.
<Patient|Pt> <tolerated|did not tolerate> {MED} due to {COND}.
{MED} <can|may> cause {COND}; <counseled|educated> patient.
<{COND=Pain} in|{COND=Swelling} of|{COND=Bruising} over> the {ANAT}<.| after a fall.>
<{TEST=CT}|{TEST=MRI}|{TEST=X-ray}> of the {ANAT} <ordered|pending|negative>.
Referred for {PROC} <at|to> {HOSP}.
<Seen|Followed> at {HOSP} in {CITY} for {COND}.
Discussed risks and benefits of {PROC} with the patient and <her|his> <daughter|son|wife|husband>, {FIRST}.
<Admit to|Admitted to> medicine for {COND}; <start|begin> {MED} {DOSE} {ROUTE} {FREQ}.
<Sent|Discharged> home on {MED} {DOSE} {FREQ} for {N} days.
{COND} flare, treated with {MED} {DOSE} {ROUTE} {FREQ}.
Continue current regimen: {MED} {DOSE} and {MED} {DOSE}.
<{TEST=Echo}|{TEST=TTE}> showed an {TEST=EF} of {RESULT} with {COND}.
Noted {COND} involving the {ANAT} and {ANAT}.
Last {PROC} <was|performed> {DATE}<| by Dr. {LAST}>.
<Uncomplicated|Complicated> {PROC} on {DATE}; <{PROC=biopsy}|pathology> showed {COND}.
<Encounter|Visit> date: {DATE}. <Provider|Attending>: Dr. {FIRST} {LAST}.
Code status: <full code|DNR/DNI>. Contact: {NAME}, {PHONE}.
""".strip().splitlines()

# Header and demographic lines.
HEADER = r"""
<PATIENT NAME|Patient name>: {LAST}, {FIRST}   <DOB|DATE OF BIRTH>: {DATE}
<Pt Name|Name>: {FIRST} {LAST}  <Age|AGE>: {AGE}  <Sex|SEX>: <F|M>
<Admitting Dx|Admission Diagnosis>: {COND}
<MRN|Hospital #>: {MRN}   <Acct|Account|FIN>: {ACCT}
<Room|Bed>: {N}<A|B|>   <Unit|Ward>: <4 West|ICU|Telemetry|5B>
<Report Date|Date|Date of Report>: {DATE}   <Time|Time of report>: {TIME}
<Specimen collected|Collected>: {DATE}  <Received|Reported>: {DATE}
<Dictated by|Author|Signed by>: {FIRST} {LAST}<, MD|, RN|, NP|>
<Signed|Electronically signed> by Dr. {FIRST} {LAST} on {DATE}
<Consulting|Consultant>: Dr. {LAST} (<GI|Cardiology|Neurology|Surgery>)
<Insurance|Payer>: <Medicare|Medicaid|BlueShield|Aetna|self-pay>, <ID|member #> {ACCT}
<Guarantor|Responsible party>: {NAME}, {ADDRESS}, {CITY}
<Preferred language|Language>: <English|Spanish|Polish|French>   <Phone|Cell>: {PHONE}
<Clinic|Department>: <Cardiology|Internal Medicine|Family Medicine> at {HOSP}
<Location|Site>: {HOSP}, {CITY}, {STATE}
<Zip|ZIP code|Postal code>: {ZIP}
<City|Town>: {CITY}   <State|Province>: {STATE}
<Street|Street address>: {ADDRESS}
<Work phone|Office phone|Work>: {PHONE}   <Fax|Office fax>: {FAX}
<Contact|Contact email>: {EMAIL}
<SSN|Soc Sec #>: {SSN}   <DOB|Birthdate>: {DATE}
<Record number|Chart #|Chart number>: {MRN}
<Case|Claim|Invoice> #: {ACCT}
<Web|Online portal>: {URL}
<Patient|Patient Name|Name|PATIENT|Pt>: {NAME}
<Name|NAME>: {LAST}, {FIRST}
<DOB|D.O.B.|Date of Birth|Birth date>: {DATE}
<MRN|MR#|Medical Record Number|Med Rec No|MRN#>: {MRN}
<Age|AGE>: {AGE}
<Sex|Gender>: <F|M|Female|Male>   <Age|Age/Sex>: {AGE}
<DOB|Born>: {DATE}  <MRN|Record #>: {MRN}
<Admission Date|Date of Admission|Admitted>: {DATE}
<Discharge Date|Date of Discharge|Discharged>: {DATE}
<Visit Date|Date of Service|DOS>: {DATE}
<Attending|Attending Physician|Provider|PCP>: Dr. {FIRST} {LAST}
<Attending|Attending Physician|Provider|PCP>: {FIRST} {LAST}, <MD|DO|NP|PA-C>
<Referring Physician|Referred by>: Dr. {LAST}
<Facility|Hospital|Location>: {HOSP}
<Address|Home Address|ADDRESS>: {ADDRESS}, {CITY}, {STATE} {ZIP}
{ADDRESS}
{CITY}, {STATE} {ZIP}
<Phone|Tel|Telephone|Ph|Home phone|Cell|Mobile>: {PHONE}
<Fax|FAX|Fax number|F>: {FAX}
<Email|E-mail|EMAIL>: {EMAIL}
<SSN|Social Security Number|SS#>: {SSN}
<Account|Acct|Account #|Billing Account|Acct No>: {ACCT}
<Insurance ID|Member ID|Policy #>: {ACCT}
<Patient portal|Portal|Website>: {URL}
<Emergency contact|Next of kin|NOK>: {NAME} (<wife|husband|daughter|son|mother|sister|friend>) {PHONE}
<Pt|Patient>: {NAME} | DOB {DATE} | MRN {MRN}
{LAST}, {FIRST} <DOB|dob> {DATE} <MRN|mrn> {MRN}
RE: {NAME}<, DOB {DATE}|, MRN {MRN}| (DOB: {DATE})>
Tel {PHONE} · Fax {FAX}
{HOSP} · {ADDRESS} · {CITY}, {STATE}
<Ordering provider|Ordered by>: {FIRST} {LAST}<, MD| MD|>
<Encounter|Enc> #{ACCT} <at|@> {HOSP}
<Primary care|PCP>: Dr. {LAST}, {HOSP}, {PHONE}
<Pharmacy|Preferred pharmacy>: {PHARM}, {CITY} <(ph {PHONE})|{PHONE}>
""".strip().splitlines()

# Contact and administrative sentences (letters, portal text, intake forms).
ADMIN = r"""
<Please|Kindly> <confirm|verify> the <patient's|pt's> <date of birth|DOB> ({DATE}) and <MRN|medical record number> ({MRN}).
The <referral|request> was <sent|faxed> <to|on> {DATE} <from|by> {HOSP}.
<Our|The> <fax|fax number> is {FAX} and <our|the> <phone|main line> is {PHONE}.
<For|To> <billing|payment> questions <call|contact> {PHONE}<.| and quote account {ACCT}.>
<Statement|Bill> for account {ACCT} <mailed|sent> to {ADDRESS}, {CITY}, {STATE} {ZIP}.
<Her|His> <employer|school> is in {CITY}<.|, {STATE}.>
<The patient|Pt> <was born|grew up> in {CITY} and <moved|relocated> to {STATE} in {DATE}.
<Ride|Transport> <arranged|booked> from {ADDRESS} to {HOSP} on {DATE}.
<Mother|Father|Guardian>: {NAME}, <phone|tel> {PHONE}, <email|e-mail> {EMAIL}.
{FIRST} {LAST} <called|phoned> <asking|to ask> about <her|his> <appointment|results> on {DATE}.
<Message|Msg> <left|sent> <for|to> {FIRST} <via portal|by text|on voicemail> on {DATE}.
<Patient|Pt> <registered|signed up> for the portal at {URL} with {EMAIL}.
<Identity|ID> <verified|checked> <with|using> <SSN|last four of SSN> {SSN}.
<The|Our> <clinic|office> <has moved|is now located> to {ADDRESS}, {CITY} {ZIP}.
<Prescription|Rx> sent to {PHARM}<, {CITY}.|, {ADDRESS}.|.>
<Refill|Prior authorization> <request|req> <faxed|sent> from {PHARM} ({FAX}).
<Lab|Imaging> <order|requisition> for {NAME}, MRN {MRN}, DOB {DATE}.
<Copy|Copies> to: Dr. {FIRST} {LAST}, {HOSP}, {ADDRESS}, {CITY}, {STATE} {ZIP}.
<Call|Page> Dr. {LAST} at {PHONE} <with|for> <critical values|questions>.
<Interpreter|Translator> {FIRST} <was present|assisted> <for the visit|by phone>.
<Visit|Appointment> <reminder|confirmation> sent to {EMAIL} <and|or> {PHONE}.
<Home health|Visiting nurse> <agency|service>: {HOSP}, <tel|phone> {PHONE}, <fax|f> {FAX}.
<Medical records|HIM> <department|dept>, {HOSP}, {ADDRESS}, {CITY}, {STATE} {ZIP}.
<Born on|DOB> {DATE}<,| -> age {AGE}, <resides|living> in {CITY}.
<Emergency|Alternate> <contact|phone>: {FIRST} ({PHONE}).
<Download|Complete> the <form|questionnaire> at {URL} <before|prior to> <your|the> visit on {DATE}.
Please call <our office|the clinic|us> at {PHONE} <to schedule|with any questions|if symptoms worsen>.
<Results|Records> <can be|were> faxed to {FAX} <attn|attention> Dr. {LAST}.
You can reach me at {EMAIL} or {PHONE}.
<Send|Please send> the <records|report|referral> to {EMAIL}.
<Visit|See> {URL} <for more information|to view your results|to book online>.
<The patient|Pt|She|He> lives at {ADDRESS}, {CITY}, {STATE} {ZIP}.
<She|He> recently moved from {CITY} to {CITY}, {STATE}.
<Mailing address|Send correspondence to>: {ADDRESS}, {CITY} {ZIP}.
<Her|His> social security number is {SSN}.
<Her|His> <account number|billing account> is {ACCT}<.| and the MRN is {MRN}.>
<Verified|Confirmed> identity with <name|full name> {NAME} and <DOB|date of birth> {DATE}.
<Spoke with|Called> {NAME} at {PHONE} on {DATE}.
<Left voicemail|LVM> for {FIRST} at {PHONE}<.| re: results.>
<Daughter|Son|Wife|Husband> {FIRST} {LAST} <can be reached|is available> at {PHONE}.
Appointment <on|scheduled for> {DATE} at {HOSP}, {ADDRESS}.
<Transfer|Transferred> from {HOSP} in {CITY}<.|, {STATE}.>
<Records requested from|Outside records from> {HOSP}, fax {FAX}.
<Case manager|Social worker> {FIRST} {LAST} ({EMAIL}) <will follow|to follow up>.
Patient ID {MRN} <registered|checked in> at {HOSP} on {DATE}.
{NAME} (MRN {MRN}) was seen on {DATE}.
Claim for account {ACCT} <submitted|denied|pending> on {DATE}.
Please update <the|her|his> address to {ADDRESS}, {CITY}, {STATE} {ZIP}.
<Born|Birth> {DATE} in {CITY}.
<New patient|Intake>: {NAME}, {AGE} years old, from {CITY}.
Contact <info|details>: {PHONE} / {EMAIL}
<Online|Telehealth> visit link: {URL}
<Questions|Concerns>? <Email|Write to> {EMAIL} or <call|phone> {PHONE}.
Forward the <{TEST=MRI}|{TEST=CT}|lab> report to Dr. {LAST} at {FAX}.
<Her|His> <nephew|niece|neighbor> {FIRST} drove <her|him> from {CITY}.
Insurance <member|subscriber> ID {ACCT}, <SSN|ssn> {SSN}.
""".strip().splitlines()

# Letter openings, bodies and closings.
LETTER = r"""
To whom it may concern,
<Re|RE|Regarding>: {NAME}, <DOB|born> {DATE}, <MRN|hospital number> {MRN}
<On|At> examination <today|on {DATE}> <she|he> had {COND} <of|over> the {ANAT}.
<I|We> <discussed|reviewed> the <results|findings> of <her|his> {TEST} with <her|him>.
<I|We> <suspect|believe> <her|his> {COND} is <related to|caused by> {MED}.
<She|He> <would|will> <benefit from|need> {PROC} <and|or> {PROC}.
<Please do not hesitate|Feel free> to <contact|call> me at {PHONE} <or|and> {EMAIL}.
<I will|We will> <see|review> <her|him> again in {N} <weeks|months>.
<Yours faithfully|With best wishes|Warm regards|Thank you>,
<Division|Department> of <Cardiology|Medicine|Surgery>, {HOSP}
Dr. {LAST}<| MD| (Consultant)>
Dear Dr. {LAST},
Dear <Dr.|Doctor> {FIRST} {LAST},
Dear {FIRST},
<Thank you for|Thanks for> referring {NAME}, a {AGE}-year-old <woman|man> with {COND}.
I <saw|had the pleasure of seeing> <Mr.|Ms.|Mrs.> {LAST} in clinic on {DATE} for {COND}.
I am writing <regarding|about> our mutual patient {NAME} (DOB {DATE}).
<She|He> has been <treated|managed> for {COND} with {MED} {DOSE} {FREQ}.
I would appreciate your <opinion|advice|input> regarding {PROC} for <her|his> {COND}.
<I have|We have> <started|recommended> {MED} and <ordered|arranged> {TEST}.
<Please|Kindly> <see|evaluate> <her|him> for possible {PROC}.
<Her|His> {TEST} was {RESULT} on {DATE}.
<Sincerely|Kind regards|Best regards|Yours sincerely|Regards>,
Dr. {FIRST} {LAST}
{FIRST} {LAST}, <MD|DO|FRCP|MBBS>
{HOSP}, {ADDRESS}, {CITY}
<cc|CC>: Dr. {LAST}, {HOSP}
<Direct line|Office>: {PHONE}<| | Fax: {FAX}>
""".strip().splitlines()

# Patient portal messages: informal, lowercase-friendly.
MESSAGE = r"""
<hi|hello> its {FIRST}, <can|could> <someone|u> call me back
<got|had> my {TEST} <done|drawn> <today|yesterday> at {HOSP}, when will <i|I> get results
<my|My> <mom|dad> is {AGE} and <has|had> {COND}, <is that|is this> <genetic|serious>?
<the|The> {MED} {DOSE} <isnt|is not> working <anymore|for my {COND}>
<started|Started> the {MED} <on|last> <monday|friday|{DATE}> and now i have {COND}
<need|Need> a <note|letter> for <work|school> <for|about> my {COND}
<can i|should i> <double|skip|split> my {MED} <dose|pill>?
<woke up|Woke up> with {COND} and {COND}<, should i go to the er| - er?|>
<i|I> <live|am> at {ADDRESS} <if|in case> you need to <send|mail> <anything|the forms>
<pls|please> <update|change> my <phone|number> to {PHONE}
<ok|OK|okay> <see you|thanks> on {DATE}
<my|My> {ANAT} <is|got> <red|swollen|bruised> <after|since> the {PROC} <yesterday|last week>
<sent|Sent> from my phone
<yes|Yes> <i|I> <took|take> {MED} {FREQ}
<no|No> <{COND=fever}|{COND}> <but|just> {COND}
hi <dr|doctor|Dr.> {LAST}, my {COND} is <worse|back|not better> since <yesterday|last week|monday>
<Hello|Hi|Hey>, this is {FIRST} {LAST}<,| -> my <mom|dad|husband|wife> {FIRST} has {COND} again
can i take {MED} with {MED}<?|??| ?>
i ran out of my {MED}<, can you refill| pls refill|. Can you send a refill> to {PHARM}
the {MED} makes me <dizzy|nauseous|tired|sleepy><| lol|.>
my <{TEST=sugar}|{TEST=blood pressure}|{TEST=bp}|{TEST=temp}> was {RESULT} this morning
<Is it normal|is it ok> to have {COND} after {PROC}?
my {ANAT} <hurts|is swollen|feels numb> since the {PROC}
<call|text> me at {PHONE} <pls|please|when you can|thx>
<my new|New> email is {EMAIL}
<we|I> moved to {ADDRESS} in {CITY}
<appt|appointment> on {DATE}<?| still ok?| at 3pm>
thanks, {FIRST}
<Thank you|thx|Thanks so much>!
<sorry|Sorry> to bother you but the {COND} <is killing me|wont go away|keeps coming back>
should i stop the {MED} before my {PROC} on {DATE}
<I'm|im> {AGE} and <never had|just got diagnosed with> {COND}
pharmacy says the {MED} {DOSE} is <back ordered|not covered|out of stock>
can you fax my {TEST} results to {FAX}
<my daughter|my son> {FIRST} will bring me to {HOSP}
""".strip().splitlines()

# Problem list and medication list items.
LIST_ITEM = r"""
<Hx of|History of|h/o> {COND}
{COND}, <on|treated with> {MED} {DOSE}
<S/p|s/p> {PROC} <x2|in {DATE}|at {HOSP}|>
<Hypertension|HTN>-like <sx|symptoms>: {COND}
{COND} (<ICD|code> pending)
{COND} <- followed by Dr. {LAST}|, sees Dr. {LAST}>
{PROC} ({DATE})<| - {HOSP}>
{MED}: {DOSE} {ROUTE} {FREQ}
{MED} {DOSE} {ROUTE} {FREQ} <(home med)|(new)|(held)|(changed)>
{MED} <inhaler|nebs|drops|cream|patch> {FREQ}
{MED} <as directed|per sliding scale|{FREQ=PRN} {COND}>
<Allergy|Allergies>: {MED} - <{COND=rash}|{COND=hives}|{COND=swelling}|{COND=nausea}>
{COND}
{COND}<, controlled|, stable|, uncontrolled|, resolved|>
{COND} (<dx|diagnosed> {DATE})
{COND} - on {MED}
{COND} s/p {PROC}<| ({DATE})>
Hx {PROC} <for|due to> {COND}
{MED} {DOSE} {ROUTE} {FREQ}
{MED} {DOSE} {FREQ}
{MED} {DOSE} <tab|tablet|cap|capsule> {ROUTE} {FREQ}
{MED} {DOSE} {ROUTE} {FREQ} <for|x> {N} days
{MED} {DOSE} {FREQ} <for|prn> {COND}
{MED} {FREQ}
{MED} <(|- >{DOSE}<)|>
{MED} - {DOSE} - {ROUTE} - {FREQ}
<Take|take> {DOSE} of {MED} {ROUTE} {FREQ}
{MED} {DOSE}/<day|dose> <(|>{FREQ}<)|>
""".strip().splitlines()

# Laboratory and vital-sign lines.
LAB = r"""
{TEST}: {RESULT} <(abnormal)|(normal)|(high)|(low)|>
<Result|Value> for {TEST} <is|was> {RESULT}
<Latest|Most recent> {TEST} {RESULT} <({DATE})|on {DATE}|>
{TEST} <..........|....|:> {RESULT}
<Component|Test>: {TEST}  <Value|Result>: {RESULT}  <Flag|Abn>: <H|L|N>
<Collected|Drawn> {DATE} {TIME}: {TEST} {RESULT}, {TEST} {RESULT}
{TEST} <result|resulted>: {RESULT} (<prior|previous> {RESULT} on {DATE})
<CRITICAL|Critical value>: {TEST} {RESULT}<, called to Dr. {LAST}|>
{TEST} <unremarkable|normal|within normal limits>
{TEST} of the {ANAT} <shows|showed> {COND}
{TEST}: {RESULT}
{TEST} {RESULT}<| (H)| (L)| H| L| *>
{TEST} = {RESULT}
{TEST}: {RESULT} <(ref|reference range|normal> {RESULT}<)|>
{TEST} {RESULT} <on|drawn> {DATE}
{DATE} {TEST} {RESULT}
{TEST} <was|returned> {RESULT}<| and {TEST} {RESULT}>
{TEST} / {TEST}: {RESULT} / {RESULT}
{TEST} trending <up|down>: {RESULT} -> {RESULT}
{TEST}: <pending|not done|see note>
{TEST} ({ANAT}): {COND}
{TEST}, {DATE}: <no|mild|small> {COND}<| of the {ANAT}>
""".strip().splitlines()

FIRST_EDITION = {
    "NARRATIVE": NARRATIVE,
    "HEADER": HEADER,
    "ADMIN": ADMIN,
    "LETTER": LETTER,
    "MESSAGE": MESSAGE,
    "LIST_ITEM": LIST_ITEM,
    "LAB": LAB,
}

# Editions in the order they were written (templates_more.py holds the second and third,
# templates_fourth.py the fourth); each is split into train and held-out templates on its own.
LATER_EDITIONS = templates_more.EDITIONS + [templates_fourth.FOURTH]
EDITIONS = {name: [lines] + [ed.get(name, []) for ed in LATER_EDITIONS]
            for name, lines in FIRST_EDITION.items()}
POOLS = {name: [t for ed in eds for t in ed] for name, eds in EDITIONS.items()}
